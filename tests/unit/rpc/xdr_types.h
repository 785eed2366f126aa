/*
 * xdr_types.h - every message type of every OpenNSR RPC program, as a
 * table the XDR tests and the XDR fuzz target walk.  Add a line here when
 * a .x file gains a type.
 */
#ifndef NSR_TEST_XDR_TYPES_H
#define NSR_TEST_XDR_TYPES_H

#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr/rpc/nsrmmd.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/rpc/nsrsnm.h"

struct xdr_type {
	const char *name;
	xdrproc_t proc;
	size_t size;
};

#define XT(t) {#t, NSR_XDR(xdr_##t), sizeof(t)}

static const struct xdr_type xdr_types[] = {
	XT(nsr_status), XT(nsr_void_res),
	XT(loc_key), XT(loc_reg_args), XT(loc_get_res), XT(loc_entry), XT(loc_dump_res),
	XT(res_query_args), XT(res_list_res), XT(res_text_args), XT(res_change_res),
	XT(save_start_args), XT(save_start_res), XT(save_end_args), XT(rec_frag),
	XT(rec_start_args), XT(rec_start_res), XT(rec_end_args), XT(label_args),
	XT(label_res), XT(vol_mode_args), XT(vol_del_args),
	XT(mm_volume), XT(mm_saveset), XT(mm_fragment), XT(mm_clone), XT(mm_row),
	XT(mm_name_args), XT(mm_vol_res), XT(mm_vol_written_args), XT(mm_ss_create_res),
	XT(mm_ss_res), XT(mm_frag_list_res), XT(mm_query_args), XT(mm_next_args),
	XT(mm_next_res), XT(mm_check_res),
	XT(job_rec), XT(job_create_res), XT(job_update_args), XT(job_log_args),
	XT(job_query_args), XT(job_next_args), XT(job_row), XT(job_next_res),
	XT(job_purge_args), XT(job_purge_res),
	XT(ix_entry), XT(ix_begin_args), XT(ix_add_args), XT(ix_ss_args),
	XT(ix_lookup_args), XT(ix_lookup_res),
	XT(snm_device), XT(snm_mover_args), XT(snm_mover_res), XT(snm_mover_info),
	XT(snm_status_res),
	XT(mmd_label), XT(mmd_label_args), XT(mmd_label_res), XT(mmd_frag),
	XT(mmd_begin_args), XT(mmd_data_args), XT(mmd_end_args), XT(mmd_end_res),
	XT(mmd_read_args), XT(mmd_next_args), XT(mmd_next_res),
	/* New types go at the end: fuzz seeds name types by index. */
	XT(mm_ss_restore_args), XT(next_vol_args), XT(next_vol_res),
	XT(mm_ss_flags_args), XT(mmd_remove_args), XT(mmd_remove_res),
	XT(mmd_eom), XT(mmd_sync_args), XT(mmd_sync_res),
};

#endif
