/*
 * test_xdr.c - XDR round trips of every message type of every OpenNSR
 * RPC program, with valid and truncated input.
 *
 * A value of each type is made by decoding from a generator stream that
 * answers every integer request with a small changing number (so every
 * string, opaque and array gets 1-3 elements) and every byte request with
 * printable bytes.  Then: encode -> decode -> encode gives the same bytes
 * and consumes all of them; every truncation of the encoding fails to
 * decode; single bit flips never crash (decode may succeed or fail) and
 * never leak (ASan's leak checker runs at exit).
 */
#include "nsr/compat.h"

#include "nsr_test.h"
#include "xdr_types.h"

/* The generator stream. */
static unsigned gen_counter;

static bool_t gen_getlong(XDR *x, long *lp)
{
	NSR_UNUSED(x);
	*lp = (long)(gen_counter++ % 3) + 1;
	return TRUE;
}

static bool_t gen_getbytes(XDR *x, char *p, u_int n)
{
	NSR_UNUSED(x);
	for (u_int i = 0; i < n; i++)
		p[i] = (char)('a' + (gen_counter + i) % 26);
	gen_counter++;
	return TRUE;
}

static u_int gen_getpostn(XDR *x)
{
	NSR_UNUSED(x);
	return 0;
}

static bool_t gen_setpostn(XDR *x, u_int p)
{
	NSR_UNUSED(x);
	NSR_UNUSED(p);
	return FALSE;
}

static int32_t *gen_inline(XDR *x, u_int n)
{
	NSR_UNUSED(x);
	NSR_UNUSED(n);
	return NULL; /* forces the generated code's slow path */
}

static void gen_destroy(XDR *x)
{
	NSR_UNUSED(x);
}

static bool_t gen_control(XDR *x, int req, void *info)
{
	NSR_UNUSED(x);
	NSR_UNUSED(req);
	NSR_UNUSED(info);
	return FALSE;
}

static const struct xdr_ops gen_ops = {
	.x_getlong = gen_getlong,
	.x_getbytes = gen_getbytes,
	.x_getpostn = gen_getpostn,
	.x_setpostn = gen_setpostn,
	.x_inline = gen_inline,
	.x_destroy = gen_destroy,
	.x_control = gen_control,
};

#define BUFSZ (256 * 1024)

/* encode - value into buf; returns the length, fails the test on error. */
static u_int encode(const struct xdr_type *t, void *v, char *buf)
{
	XDR x;
	u_int n;

	xdrmem_create(&x, buf, BUFSZ, XDR_ENCODE);
	if (!t->proc(&x, v))
		fail_msg("%s: encode failed", t->name);
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

/* decode - bytes into a new value; NULL if decoding failed. */
static void *decode(const struct xdr_type *t, char *buf, u_int len, u_int *used)
{
	void *v = calloc(1, t->size);
	XDR x;
	bool_t ok;

	xdrmem_create(&x, buf, len, XDR_DECODE);
	ok = t->proc(&x, v);
	if (used)
		*used = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok) {
		xdr_free(t->proc, v);
		free(v);
		return NULL;
	}
	return v;
}

static void test_round_trips(void **state)
{
	char *b1 = malloc(BUFSZ), *b2 = malloc(BUFSZ);

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(xdr_types); i++) {
		const struct xdr_type *t = &xdr_types[i];
		void *v = calloc(1, t->size), *w;
		XDR gx = {.x_op = XDR_DECODE, .x_ops = &gen_ops};
		u_int n, n2, used;

		gen_counter = (unsigned)i;
		if (!t->proc(&gx, v))
			fail_msg("%s: generator decode failed", t->name);
		n = encode(t, v, b1);
		assert_true(n > 0);
		assert_int_equal(n % 4, 0);
		w = decode(t, b1, n, &used);
		if (!w)
			fail_msg("%s: decode of a valid encoding failed",
				 t->name);
		assert_int_equal(used, n);
		n2 = encode(t, w, b2);
		assert_int_equal(n2, n);
		if (memcmp(b1, b2, n) != 0)
			fail_msg("%s: re-encoding differs", t->name);
		/* Every truncation fails. */
		for (u_int len = 0; len < n; len++) {
			void *tr = decode(t, b1, len, NULL);

			if (tr)
				fail_msg("%s: decoded from %u of %u bytes",
					 t->name, len, n);
		}
		/* Bit flips: no crash, no leak. */
		for (u_int bit = 0; bit < n * 8; bit += 7) {
			void *f;

			b1[bit / 8] ^= (char)(1 << (bit % 8));
			f = decode(t, b1, n, NULL);
			if (f) {
				xdr_free(t->proc, f);
				free(f);
			}
			b1[bit / 8] ^= (char)(1 << (bit % 8));
		}
		xdr_free(t->proc, v);
		xdr_free(t->proc, w);
		free(v);
		free(w);
	}
	free(b1);
	free(b2);
}

static void test_hostile_lengths(void **state)
{
	/* A string length far over its bound is refused before allocation. */
	char buf[16];
	XDR x;
	nsr_status st;

	NSR_UNUSED(state);
	memset(buf, 0, sizeof(buf));
	buf[4] = (char)0xff; /* msg length 0xfffffff0 */
	buf[5] = (char)0xff;
	buf[6] = (char)0xff;
	buf[7] = (char)0xf0;
	memset(&st, 0, sizeof(st));
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_false(xdr_nsr_status(&x, &st));
	xdr_destroy(&x);
	xdr_free(NSR_XDR(xdr_nsr_status), &st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_hostile_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
