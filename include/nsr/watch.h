/*
 * watch.h - what nsrwatch(1) shows, rendered from nsrd's STATUS answer
 * (status_res, src/rpc/nsrd.x): devices, movers, sessions and the saves
 * that wait (queued at the server's parallelism, or mount requests), and
 * with STATUS_RATES the transfer rates per device and session, as a text
 * screen or as one JSON object.  Pure formatting: no I/O.
 */
#ifndef NSR_WATCH_H
#define NSR_WATCH_H

#include "nsr/rpc/nsrd.h"

struct nsr_buf;

/* nsr_watch_text - the status as a screen of text lines. */
int nsr_watch_text(const status_res *st, struct nsr_buf *out);
/* nsr_watch_json - the status as one JSON object and a newline. */
int nsr_watch_json(const status_res *st, struct nsr_buf *out);
/* nsr_watch_text_rates, nsr_watch_json_rates - the same with the
 * transfer rates of STATUS_RATES (rt; NULL: none, as above): a Rates
 * section, or a "rates" member. */
int nsr_watch_text_rates(const status_res *st, const rates_res *rt,
			 struct nsr_buf *out);
int nsr_watch_json_rates(const status_res *st, const rates_res *rt,
			 struct nsr_buf *out);

#endif /* NSR_WATCH_H */
