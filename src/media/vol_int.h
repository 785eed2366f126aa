/*
 * vol_int.h - private to src/media: helpers shared by the volume label,
 * writer and reader code.
 */
#ifndef NSR_MEDIA_VOL_INT_H
#define NSR_MEDIA_VOL_INT_H

#include "nsr/dev.h"
#include "nsr/vol.h"

/* vol_intent_path - DIR/name (an intent record of the AFTD in dev) into
 * out: NSR_OK or NSR_ERR_TOOBIG. */
int vol_intent_path(struct nsr_dev *dev, const char *name, char *out,
		    size_t cap);
/* vol_intent_read - the intent record DIR/name (its path into path) into
 * rec, at most max bytes: NSR_OK with rec->len 0 when there is none, or
 * an error. */
int vol_intent_read(struct nsr_dev *dev, const char *name, char *path,
		    size_t cap, struct nsr_buf *rec, size_t max);
/* vol_test_pause - after each session file a removal or relabel takes
 * off an AFTD: sleep NSR_TEST_REMOVE_PAUSE_MS (tests only: fault tests
 * kill the mover halfway). */
void vol_test_pause(void);
/* vol_why - append a formatted explanation to why (may be NULL). */
void vol_why(struct nsr_buf *why, const char *fmt, ...) NSR_PRINTF(2, 3);
/* vol_volid_str - the volume id as 32 hex digits into out[33]. */
void vol_volid_str(const uint8_t *volid, char *out);
/* vol_read_label - nsr_vol_label_read plus a check of the block size
 * against the device; used by writer and reader. */
int vol_read_label(struct nsr_dev *dev, struct nsr_vol_label *lab,
		   struct nsr_buf *why);

#endif /* NSR_MEDIA_VOL_INT_H */
