/*
 * fuzz_mmdb_record.c - the media database record decoders on hostile
 * bytes.  Byte 0 picks the decoder (even: volume record, odd: stored save
 * set record); a successful decode must re-encode and decode to the same
 * record.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"

#include "../../src/mmdb/mmdb_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		struct mmdb_volume v, v2;
		struct nsr_buf b;

		if (mmdb_vol_decode(data + 1, size - 1, &v) != NSR_OK)
			return 0;
		nsr_buf_init(&b, 0);
		if (mmdb_vol_encode(&v, &b) != NSR_OK ||
		    mmdb_vol_decode(b.data, b.len, &v2) != NSR_OK ||
		    memcmp(&v, &v2, sizeof(v)) != 0)
			abort();
		nsr_buf_release(&b);
	} else {
		struct ssrec *r = malloc(sizeof(*r)), *r2 = malloc(sizeof(*r2));
		uint8_t *enc = malloc(SSREC_MAX);
		size_t len;

		if (!r || !r2 || !enc)
			abort();
		memset(r, 0, sizeof(*r));
		memset(r2, 0, sizeof(*r2));
		if (mmdb_ssrec_decode(data + 1, size - 1, 7, r) == NSR_OK) {
			if (mmdb_ssrec_encode(r, enc, SSREC_MAX, &len) !=
				    NSR_OK ||
			    mmdb_ssrec_decode(enc, len, 7, r2) != NSR_OK ||
			    memcmp(r, r2, sizeof(*r)) != 0)
				abort();
		}
		free(r);
		free(r2);
		free(enc);
	}
	return 0;
}
