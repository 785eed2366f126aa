/*
 * media_test.h - helpers shared by the media unit tests: deterministic
 * save-set contents, devices in a temporary directory, labeling, and a
 * collector for the reader's callbacks.
 */
#ifndef NSR_MEDIA_TEST_H
#define NSR_MEDIA_TEST_H

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/vol.h"

#define MT_MAX_SS 16

/* mt_byte - byte number off of save set ssid. */
uint8_t mt_byte(uint32_t ssid, uint64_t off);
/* mt_fill - bytes [off, off+len) of save set ssid. */
void mt_fill(uint32_t ssid, uint64_t off, uint8_t *p, size_t len);
/* mt_check - does p hold bytes [off, off+len) of ssid? */
int mt_check(uint32_t ssid, uint64_t off, const uint8_t *p, size_t len);
/* mt_rand - a small deterministic PRNG. */
uint32_t mt_rand(uint32_t *state);
/* mt_hdr - a save-set header for ssid. */
void mt_hdr(struct nsr_vol_sshdr *h, uint32_t ssid);
/* mt_vtape - open (create) dir/name as a vtape. */
struct nsr_dev *mt_vtape(const char *dir, const char *name, uint64_t cap,
			 uint64_t ew);
/* mt_aftd - open (create) dir/name as an adv_file device. */
struct nsr_dev *mt_aftd(const char *dir, const char *name, uint64_t quota);
/* mt_label - label dev with a new volume (asserts success). */
void mt_label(struct nsr_dev *dev, const char *name, uint32_t bs,
	      struct nsr_vol_label *lab);
/* mt_writer - open a writer without fsyncs (asserts success). */
struct nsr_vol_writer *mt_writer(struct nsr_dev *dev);
/* mt_write_ss - one whole save set of total bytes in pieces up to
 * piece bytes; *frag gets its fragment. */
void mt_write_ss(struct nsr_vol_writer *w, uint32_t ssid, uint64_t total,
		 size_t piece, struct nsr_vol_frag *frag);
/* mt_collect - nsr_vol_data_fn appending to a struct nsr_buf. */
int mt_collect(void *arg, const void *p, size_t len);

/* What a scan saw. */
struct mt_scan {
	int begins, ends, unfinished, damages;
	uint32_t begin_ssid[MT_MAX_SS];
	uint32_t end_ssid[MT_MAX_SS];
	uint64_t end_bytes[MT_MAX_SS];
	uint32_t unfinished_ssid[MT_MAX_SS];
	uint32_t damage_ssid[MT_MAX_SS];
	int damage_rc[MT_MAX_SS];
};
/* mt_scan_ops - ops filling a struct mt_scan. */
extern const struct nsr_vol_scan_ops mt_scan_ops;
/* mt_scan_has - is ssid in list[0..n)? */
int mt_scan_has(const uint32_t *list, int n, uint32_t ssid);

#endif /* NSR_MEDIA_TEST_H */
