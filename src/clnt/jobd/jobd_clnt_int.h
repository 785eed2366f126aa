/*
 * jobd_clnt_int.h - private to src/clnt/jobd: the connection handle.
 */
#ifndef NSR_JOBD_CLNT_INT_H
#define NSR_JOBD_CLNT_INT_H

#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/rpc/nsrjob.h"

struct nsr_jobd {
	struct nsr_peer *peer;	/* nsrjobd on the server */
	job_next_res batch;	/* the decoded batch (valid if have_batch) */
	int have_batch;
	u_int pos;		/* next row of batch to hand out */
	const job_row *row;	/* the current row */
	struct nsr_jobdb_job job; /* the current job (strings in row) */
	int open;		/* a query is open */
	int done;		/* the server sent its last batch */
	int with_log;		/* ask for logs */
	struct nsr_jobdb_query *q; /* copy of the open query (show list) */
};

#endif /* NSR_JOBD_CLNT_INT_H */
