/*
 * jobd_clnt_int.h - private to src/clnt/jobd: the connection handle and
 * the printer's attribute table.
 */
#ifndef NSR_JOBD_CLNT_INT_H
#define NSR_JOBD_CLNT_INT_H

#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/rpc/nsrjob.h"

/* Attributes in the jobs db's canonical order (nsr_jobsdb(5)); the
 * printer mirrors nsr_jobdb_cursor_print exactly. */
enum jobd_attr {
	JD_ID, JD_PARENT, JD_TYPE, JD_NAME, JD_CLIENT, JD_LEVEL, JD_GROUP,
	JD_ACTION, JD_HOST, JD_PID, JD_STATE, JD_STATUS, JD_START, JD_END,
	JD_BYTES, JD_FILES, JD_SSIDS, JD_COMMAND, JD_LOG, JD_COUNT
};

struct nsr_jobd {
	struct nsr_rpc_clnt *c;
	job_next_res batch;	/* the decoded batch (valid if have_batch) */
	int have_batch;
	u_int pos;		/* next row of batch to hand out */
	const job_row *row;	/* the current row */
	struct nsr_jobdb_job job; /* the current job (strings in row) */
	int open;		/* a query is open */
	int done;		/* the server sent its last batch */
	int with_log;		/* ask for logs */
	size_t nshow;		/* 0 = every attribute */
	enum jobd_attr show[JD_COUNT];
};

/* jobd_show_from_text - set j's show list (and with_log) from the "show"
 * line of a query's canonical text. */
int jobd_show_from_text(struct nsr_jobd *j, const char *text);

#endif /* NSR_JOBD_CLNT_INT_H */
