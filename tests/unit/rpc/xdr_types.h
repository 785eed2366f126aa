/*
 * xdr_types.h - every message type of every OpenNSR RPC program, as a
 * table the XDR tests and the XDR fuzz target walk.  Add a line here when
 * a .x file gains a type, at the END of its table: the seeds of fuzz_xdr
 * (byte 0) and fuzz_rpc_record (byte 1 of a reply seed) select entries
 * by index, and name the entry they mean.
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
	XT(nsr_status),
	XT(nsr_void_res),
	XT(loc_key),
	XT(loc_reg_args),
	XT(loc_get_res),
	XT(loc_entry),
	XT(loc_dump_res),
	XT(exec_save_args),
	XT(exec_run_res),
	XT(exec_poll_args),
	XT(exec_saveset),
	XT(exec_poll_res),
	XT(res_query_args),
	XT(res_list_res),
	XT(res_text_args),
	XT(res_change_res),
	XT(save_start_args),
	XT(save_start_res),
	XT(save_end_args),
	XT(rec_frag),
	XT(rec_start_args),
	XT(rec_start_res),
	XT(rec_end_args),
	XT(label_args),
	XT(label_res),
	XT(vol_mode_args),
	XT(vol_del_args),
	XT(mm_volume),
	XT(mm_saveset),
	XT(mm_fragment),
	XT(mm_clone),
	XT(mm_row),
	XT(mm_name_args),
	XT(mm_vol_res),
	XT(mm_vol_written_args),
	XT(mm_ss_create_res),
	XT(mm_ss_res),
	XT(mm_frag_list_res),
	XT(mm_query_args),
	XT(mm_next_args),
	XT(mm_next_res),
	XT(mm_check_res),
	XT(job_rec),
	XT(job_create_res),
	XT(job_update_args),
	XT(job_log_args),
	XT(job_query_args),
	XT(job_next_args),
	XT(job_row),
	XT(job_next_res),
	XT(job_purge_args),
	XT(job_purge_res),
	XT(ix_entry),
	XT(ix_begin_args),
	XT(ix_add_args),
	XT(ix_ss_args),
	XT(ix_lookup_args),
	XT(ix_lookup_res),
	XT(snm_device),
	XT(snm_mover_args),
	XT(snm_mover_res),
	XT(snm_mover_info),
	XT(snm_status_res),
	XT(mmd_label),
	XT(mmd_label_args),
	XT(mmd_label_res),
	XT(mmd_frag),
	XT(mmd_begin_args),
	XT(mmd_data_args),
	XT(mmd_end_args),
	XT(mmd_end_res),
	XT(mmd_read_args),
	XT(mmd_next_args),
	XT(mmd_next_res),
	XT(mmd_counter),
	XT(mmd_counters_res),
	XT(mmd_sets_piece),
	XT(mmd_sets_next_res),
	/* New types go at the end: fuzz seeds name types by index. */
	XT(mm_ss_restore_args),
	XT(next_vol_args),
	XT(next_vol_res),
	XT(mm_ss_flags_args),
	XT(mmd_remove_args),
	XT(mmd_remove_res),
	XT(mmd_eom),
	XT(mmd_sync_args),
	XT(mmd_sync_res),
	XT(save_renew_args),
	XT(snm_load),
	XT(st_device),
	XT(st_mover),
	XT(st_session),
	XT(st_wait),
	XT(status_res),
	XT(rate_session),
	XT(rate_device),
	XT(rates_res),
	XT(savegrp_args),
	XT(savegrp_item),
	XT(savegrp_res),
	XT(key_cur_args),
	XT(key_args),
	XT(key_res),
	XT(ix_dirlist),
	XT(ix_lists_args),
	XT(ix_query_args),
	XT(ix_page_args),
	XT(ix_page_res),
	XT(ix_saveset),
	XT(ix_savesets_args),
	XT(ix_savesets_res),
	XT(mm_snapshot_res),
	XT(job_backup_res),
	XT(mmd_stripe_res),
	XT(mmd_join_args),
	XT(clone_start_args),
	XT(clone_start_res),
	XT(clone_end_args),
	XT(clone_end_res),
	XT(mm_clone_add_res),
	XT(mm_clone_set_args),
	XT(mmd_clone_begin_args),
	XT(mm_ss_flags_many_args),
	XT(mm_ss_flags_many_res),
	XT(nsr_grant),
	XT(grant_key_res),
	XT(mm_vol_retent),
	XT(mm_vol_retent_many_args),
};

/*
 * Every procedure of every program: the argument and result types the
 * server and client halves decode (tests/fuzz/fuzz_rpc_record.c walks it).
 * Add a line here when a .x file gains a procedure.
 */
struct xdr_proc {
	const char *name;
	uint32_t prog, vers, proc;
	xdrproc_t args;
	size_t argsize;
	xdrproc_t res;
	size_t ressize;
};

/* "void" in a procedure's signature: xdr_void and a 1-byte stand-in. */
typedef char xt_void;
#define xdr_xt_void xdr_void

#define XP(prog, vers, p, a, r)                                               \
	{#p, prog, vers, p, NSR_XDR(xdr_##a), sizeof(a), NSR_XDR(xdr_##r),   \
	 sizeof(r)}

static const struct xdr_proc xdr_procs[] = {
	XP(NSRD_PROG, NSRD_V1, RES_QUERY, res_query_args, res_list_res),
	XP(NSRD_PROG, NSRD_V1, RES_CREATE, res_text_args, res_change_res),
	XP(NSRD_PROG, NSRD_V1, RES_UPDATE, res_text_args, res_change_res),
	XP(NSRD_PROG, NSRD_V1, RES_DELETE, res_text_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, SAVE_START, save_start_args, save_start_res),
	XP(NSRD_PROG, NSRD_V1, SAVE_END, save_end_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, RECOVER_START, rec_start_args, rec_start_res),
	XP(NSRD_PROG, NSRD_V1, RECOVER_END, rec_end_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, LABEL, label_args, label_res),
	XP(NSRD_PROG, NSRD_V1, MOUNT, label_args, label_res),
	XP(NSRD_PROG, NSRD_V1, VOL_MODE, vol_mode_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, VOL_DELETE, vol_del_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, UNMOUNT, label_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, NEXT_VOLUME, next_vol_args, next_vol_res),
	XP(NSREXECD_PROG, NSREXECD_V1, LOC_GETPORT, loc_key, loc_get_res),
	XP(NSREXECD_PROG, NSREXECD_V1, LOC_REGISTER, loc_reg_args,
	   nsr_void_res),
	XP(NSREXECD_PROG, NSREXECD_V1, LOC_UNREGISTER, loc_key, nsr_void_res),
	XP(NSREXECD_PROG, NSREXECD_V1, LOC_DUMP, xt_void, loc_dump_res),
	XP(NSREXECD_PROG, NSREXECD_V1, RUN_SAVE, exec_save_args, exec_run_res),
	XP(NSREXECD_PROG, NSREXECD_V1, RUN_POLL, exec_poll_args,
	   exec_poll_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_BEGIN, ix_begin_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_ADD, ix_add_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_COMMIT, ix_ss_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_ABORT, ix_ss_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_DELETE, ix_ss_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_LIST, ix_lookup_args,
	   ix_lookup_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_FIND, ix_lookup_args,
	   ix_lookup_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_CREATE, job_rec, job_create_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_UPDATE, job_update_args, nsr_void_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_LOG, job_log_args, nsr_void_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_QUERY_OPEN, job_query_args,
	   nsr_void_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_QUERY_NEXT, job_next_args,
	   job_next_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_PURGE, job_purge_args, job_purge_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_LABEL, mmd_label_args, mmd_label_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_READ_LABEL, xt_void, mmd_label_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_BEGIN, mmd_begin_args, nsr_void_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_DATA, mmd_data_args, xt_void),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_END, mmd_end_args, mmd_end_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_READ_OPEN, mmd_read_args, nsr_void_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_READ_NEXT, mmd_next_args, mmd_next_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_READ_SETS_NEXT, mmd_next_args,
	   mmd_sets_next_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_GET, mm_name_args, mm_vol_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_GET_BY_ID, mm_volid, mm_vol_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_PUT, mm_volume, nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_DELETE, mm_name_args,
	   nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_WRITTEN, mm_vol_written_args,
	   nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_CREATE, mm_saveset,
	   mm_ss_create_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_UPDATE, mm_saveset, nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_GET, u_int, mm_ss_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_DELETE, u_int, nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_FRAG_ADD, mm_fragment, nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_FRAG_LIST, u_int, mm_frag_list_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_QUERY_OPEN, mm_query_args,
	   nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_QUERY_NEXT, mm_next_args,
	   mm_next_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_CHECK, xt_void, mm_check_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_RESTORE, mm_ss_restore_args,
	   mm_ss_create_res),
	XP(NSRSNMD_PROG, NSRSNMD_V1, SNM_MOVER, snm_mover_args, snm_mover_res),
	XP(NSRSNMD_PROG, NSRSNMD_V1, SNM_STATUS, xt_void, snm_status_res),
	/* New procedures go at the end: fuzz seeds name them by index. */
	XP(NSRD_PROG, NSRD_V1, SAVE_RENEW, save_renew_args, nsr_void_res),
	XP(NSRD_PROG, NSRD_V1, STATUS, xt_void, status_res),
	XP(NSRD_PROG, NSRD_V1, SAVEGRP, savegrp_args, savegrp_res),
	XP(NSRD_PROG, NSRD_V1, STATUS_RATES, xt_void, rates_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_FLAGS, mm_ss_flags_args,
	   nsr_void_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_REMOVE, mmd_remove_args,
	   mmd_remove_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_SYNC, mmd_sync_args, mmd_sync_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_ADD_LISTS, ix_lists_args,
	   nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_QUERY, ix_query_args, ix_page_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_PAGE, ix_page_args, ix_page_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_CLOSE, ix_page_args, nsr_void_res),
	XP(NSRINDEXD_PROG, NSRINDEXD_V1, IX_SAVESETS, ix_savesets_args,
	   ix_savesets_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SNAPSHOT, xt_void, mm_snapshot_res),
	XP(NSRJOBD_PROG, NSRJOBD_V1, JOB_BACKUP, xt_void, job_backup_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_STRIPE, xt_void, mmd_stripe_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_SS_JOIN, mmd_join_args, nsr_void_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_COUNTERS, xt_void, mmd_counters_res),
	XP(NSRD_PROG, NSRD_V1, KEY_CURRENT, key_cur_args, key_res),
	XP(NSRD_PROG, NSRD_V1, KEY_GET, key_args, key_res),
	XP(NSRD_PROG, NSRD_V1, CLONE_START, clone_start_args,
	   clone_start_res),
	XP(NSRD_PROG, NSRD_V1, CLONE_END, clone_end_args, clone_end_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_CLONE_ADD, mm_clone,
	   mm_clone_add_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_CLONE_SET, mm_clone_set_args,
	   nsr_void_res),
	XP(NSRMMD_PROG, NSRMMD_V1, MMD_CLONE_BEGIN, mmd_clone_begin_args,
	   nsr_void_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_SS_FLAGS_MANY, mm_ss_flags_many_args,
	   mm_ss_flags_many_res),
	XP(NSRD_PROG, NSRD_V1, GRANT_KEY, xt_void, grant_key_res),
	XP(NSRMMDBD_PROG, NSRMMDBD_V1, MM_VOL_RETENT_MANY,
	   mm_vol_retent_many_args, mm_ss_flags_many_res),
};

#endif
