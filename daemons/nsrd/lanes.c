/*
 * lanes.c - SAVE_START's own database handles for its unlocked work, a
 * media database half and a jobs database half per lane, handed out
 * apart (lanes.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/peer.h"

#include "lanes.h"

/* lanes_init - see lanes.h. */
void lanes_init(struct lanes *ls)
{
	memset(ls, 0, sizeof(*ls));
	pthread_mutex_init(&ls->mu, NULL);
	pthread_cond_init(&ls->cv[LANE_MMDB], NULL);
	pthread_cond_init(&ls->cv[LANE_JOBD], NULL);
}

/* make - half h's handle of l, if it has none yet (NSR_OK or
 * NSR_ERR_NOMEM); it waits for a restarting daemon at its calls. */
static int make(struct lane *l, enum lane_half h)
{
	int wait = nsr_peer_wait_default();

	if (h == LANE_MMDB)
		return l->mmdb ? NSR_OK
			       : mmdb_clnt_new("localhost", wait, &l->mmdb);
	return l->jobd ? NSR_OK
		       : nsr_jobd_new("localhost", wait < 10000 ? wait : 10000,
				      &l->jobd);
}

/* lanes_get - see lanes.h. */
struct lane *lanes_get(struct lanes *ls, enum lane_half h, int *closed)
{
	struct lane *l = NULL;

	pthread_mutex_lock(&ls->mu);
	while (!ls->closed) {
		int i = 0;

		while (i < NSRD_LANES && ls->lane[i].busy[h])
			i++;
		if (i == NSRD_LANES) {
			pthread_cond_wait(&ls->cv[h], &ls->mu);
			continue;
		}
		l = &ls->lane[i];
		if (make(l, h) != NSR_OK) {
			l = NULL; /* out of memory: the caller goes without */
			break;
		}
		l->busy[h] = 1;
		break;
	}
	*closed = ls->closed;
	pthread_mutex_unlock(&ls->mu);
	return l;
}

/* lanes_put - see lanes.h. */
void lanes_put(struct lanes *ls, struct lane *l, enum lane_half h)
{
	pthread_mutex_lock(&ls->mu);
	l->busy[h] = 0;
	if (ls->closed) {
		pthread_cond_broadcast(&ls->cv[LANE_MMDB]);
		pthread_cond_broadcast(&ls->cv[LANE_JOBD]);
	} else {
		pthread_cond_signal(&ls->cv[h]);
	}
	pthread_mutex_unlock(&ls->mu);
}

/* lanes_close - see lanes.h. */
void lanes_close(struct lanes *ls)
{
	int busy;

	pthread_mutex_lock(&ls->mu);
	ls->closed = 1;
	pthread_cond_broadcast(&ls->cv[LANE_MMDB]);
	pthread_cond_broadcast(&ls->cv[LANE_JOBD]);
	do {
		busy = 0;
		for (int i = 0; i < NSRD_LANES; i++)
			busy |= ls->lane[i].busy[LANE_MMDB] |
				ls->lane[i].busy[LANE_JOBD];
		if (busy) /* lanes_put broadcasts on both once closed */
			pthread_cond_wait(&ls->cv[LANE_MMDB], &ls->mu);
	} while (busy);
	for (int i = 0; i < NSRD_LANES; i++) {
		mmdb_clnt_close(ls->lane[i].mmdb);
		nsr_jobd_close(ls->lane[i].jobd);
		ls->lane[i].mmdb = NULL;
		ls->lane[i].jobd = NULL;
	}
	pthread_mutex_unlock(&ls->mu);
}
