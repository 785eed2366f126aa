/*
 * fuzz_mmdb_open.c - open a damaged media database: the input is a db
 * file image (and optionally a WAL) placed on the in-memory VFS, then
 * opened, checked, queried and written to.  Byte 0 holds flags:
 *   bit 0  re-seal: recompute every page's CRC and page number after
 *          mutation, so garbage reaches the B+tree and record decoders
 *          instead of stopping at the checksum;
 *   bit 1  the input after byte 1 is split at the offset given by bytes
 *          1..4 (big-endian, modulo the length): db image, then WAL.
 * Any outcome but a crash, hang or sanitizer report is fine; queries run
 * only when the integrity check passes (a cursor trusts a checked tree).
 * One vfs serves every input, reset to empty before each
 * (mmdb_vfs_mem_reset), so an input sees what a fresh one would show.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_pager.h"
#include "nsr/mmdb_vfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* reseal - fix CRC and page number of every whole page. */
static void reseal(uint8_t *img, size_t len)
{
	for (size_t off = 0; off + MMDB_PAGE_SIZE <= len;
	     off += MMDB_PAGE_SIZE) {
		uint8_t *pg = img + off;

		nsr_put_u32(pg + 4, (uint32_t)(off / MMDB_PAGE_SIZE));
		nsr_put_u32(pg, nsr_crc32c(0, pg + 4, MMDB_PAGE_SIZE - 4));
	}
}

/* exercise - use an opened database the way the daemon would. */
static void exercise(struct mmdb *db)
{
	struct nsr_buf rep;
	struct mmdb_cursor *c;
	struct mmdb_ss_row *row = malloc(sizeof(*row));
	struct mmdb_saveset ss;
	struct mmdb_volume v;
	int rc;

	if (!row)
		return;
	nsr_buf_init(&rep, 1 << 20);
	rc = mmdb_check(db, &rep);
	nsr_buf_release(&rep);
	if (rc == NSR_OK) {
		/* ssid order, then chain order (nsrim's) */
		for (unsigned f = 0; f <= MMDB_CUR_CHAINS;
		     f += MMDB_CUR_CHAINS) {
			if (mmdb_ss_query(db, NULL, f, &c) != NSR_OK)
				continue;
			for (int i = 0; i < 10000; i++)
				if (mmdb_ss_next(c, row) != 1)
					break;
			mmdb_cursor_free(c);
		}
		if (mmdb_vol_query(db, NULL, 0, &c) == NSR_OK) {
			for (int i = 0; i < 10000; i++)
				if (mmdb_vol_next(c, &v) != 1)
					break;
			mmdb_cursor_free(c);
		}
	}
	(void)mmdb_ss_get(db, 1, &ss);
	(void)mmdb_vol_get(db, "VOL001", &v);
	memset(&ss, 0, sizeof(ss));
	snprintf(ss.client, sizeof(ss.client), "fuzz");
	snprintf(ss.name, sizeof(ss.name), "/f");
	ss.savetime = 1;
	if (rc == NSR_OK)
		(void)mmdb_ss_create(db, NULL, &ss, 0, NULL);
	free(row);
}

/* scratch - the process's vfs and image buffer, reused by every input
 * (a fresh vfs and copy per input cost more than the code under test). */
static struct mmdb_vfs *scratch(size_t size, uint8_t **img)
{
	static struct mmdb_vfs *vfs;
	static uint8_t *buf;
	static size_t cap;

	if (vfs == NULL && (vfs = mmdb_vfs_mem_new(1)) == NULL)
		abort();
	mmdb_vfs_mem_reset(vfs, 1);
	if (size > cap) {
		free(buf);
		cap = size;
		if ((buf = malloc(cap)) == NULL)
			abort();
	}
	*img = buf;
	return vfs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmdb_vfs *vfs;
	struct mmdb_opts o;
	struct mmdb *db = NULL;
	uint8_t *img;
	size_t dblen, off = 1;

	if (size < 1 || size > (64u << 20))
		return 0;
	vfs = scratch(size, &img);
	memcpy(img, data, size);
	dblen = size - 1;
	if ((data[0] & 2) && size >= 5) {
		off = 5;
		dblen = size > 5 ? nsr_get_u32(data + 1) % (size - 5 + 1) : 0;
	}
	if (data[0] & 1)
		reseal(img + off, dblen);
	if (mmdb_vfs_mem_put(vfs, "/f/mmdb", img + off, dblen) != NSR_OK)
		return 0;
	if ((data[0] & 2) &&
	    mmdb_vfs_mem_put(vfs, "/f/mmdb.wal", img + off + dblen,
			     size - off - dblen) != NSR_OK)
		return 0;
	mmdb_opts_init(&o);
	o.flags = 0;
	o.vfs = vfs;
	if (mmdb_open("/f", &o, &db) == NSR_OK) {
		exercise(db);
		mmdb_close(db);
	}
	return 0;
}
