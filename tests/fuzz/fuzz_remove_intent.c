/*
 * fuzz_remove_intent.c - an AFTD's remove.intent record (nsr_volume(5)),
 * read by a mover at its start from a directory others may write into.
 * The decoder is held to a plain reading of the grammar: it reads as many
 * lines as a straightforward parse of "SSID\n" / "SSID FILE\n" (decimal,
 * 1 to 4294967295) accepts, with the same numbers, never more than asked;
 * what it read formats back to exactly the bytes it consumed when the
 * input was written in the canonical form (no leading zeros), and the
 * formatted record reads back to the same list.  A disagreement aborts.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/vol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXN 64

/* ref_number - the reference reading of one number at t[*i]: its value,
 * 0 if not a number from 1 to 2^32 - 1; *canon 0 if it had a leading 0. */
static uint64_t ref_number(const char *t, size_t len, size_t *i, int *canon)
{
	uint64_t v = 0;
	size_t start = *i;

	while (*i < len && t[*i] >= '0' && t[*i] <= '9') {
		if (v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(t[*i] - '0');
		(*i)++;
	}
	if (*i == start || v == 0 || v > UINT32_MAX)
		return 0;
	if (t[start] == '0')
		*canon = 0;
	return v;
}

/* ref_parse - the reference reading: lines read, their bytes in *used. */
static size_t ref_parse(const char *t, size_t len, uint32_t *ids,
			uint32_t *at, size_t max, size_t *used, int *canon)
{
	size_t i = 0, n = 0;

	*used = 0;
	while (n < max && i < len) {
		uint64_t id = ref_number(t, len, &i, canon), f = 0;

		if (id == 0)
			break;
		if (i < len && t[i] == ' ') {
			i++;
			f = ref_number(t, len, &i, canon);
			if (f == 0)
				break;
		}
		if (i >= len || t[i] != '\n')
			break;
		i++;
		ids[n] = (uint32_t)id;
		at[n++] = (uint32_t)f;
		*used = i;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t ids[MAXN], at[MAXN], rids[MAXN], rat[MAXN], ids2[MAXN],
		at2[MAXN];
	const char *t = (const char *)data;
	size_t max, n, rn, used = 0, n2;
	int canon = 1;
	struct nsr_buf out;

	if (size < 1)
		return 0;
	max = data[0] % (MAXN + 1);
	t++;
	size--;
	n = nsr_vol_remove_intent_parse(t, size, ids, at, max);
	rn = ref_parse(t, size, rids, rat, max, &used, &canon);
	if (n != rn || n > max)
		abort();
	for (size_t i = 0; i < n; i++)
		if (ids[i] != rids[i] || at[i] != rat[i] || ids[i] == 0)
			abort();
	nsr_buf_init(&out, 0);
	if (nsr_vol_remove_intent_format(ids, at, n, &out) != NSR_OK)
		abort();
	if (canon && (out.len != used || memcmp(out.data, t, used) != 0))
		abort();
	n2 = nsr_vol_remove_intent_parse(out.data, out.len, ids2, at2, MAXN);
	if (n2 != n || memcmp(ids2, ids, n * sizeof(*ids)) != 0 ||
	    memcmp(at2, at, n * sizeof(*at)) != 0)
		abort();
	nsr_buf_release(&out);
	return 0;
}
