/*
 * vol_int.h - private to src/media: helpers shared by the volume label,
 * writer and reader code.
 */
#ifndef NSR_MEDIA_VOL_INT_H
#define NSR_MEDIA_VOL_INT_H

#include "nsr/dev.h"
#include "nsr/vol.h"

/* vol_why - append a formatted explanation to why (may be NULL). */
void vol_why(struct nsr_buf *why, const char *fmt, ...) NSR_PRINTF(2, 3);
/* vol_volid_str - the volume id as 32 hex digits into out[33]. */
void vol_volid_str(const uint8_t *volid, char *out);
/* vol_read_label - nsr_vol_label_read plus a check of the block size
 * against the device; used by writer and reader. */
int vol_read_label(struct nsr_dev *dev, struct nsr_vol_label *lab,
		   struct nsr_buf *why);

#endif /* NSR_MEDIA_VOL_INT_H */
