/*
 * bench_seal.c - the CPU cost of the save stream's data transforms
 * (SEALED records, nsr_savestream(5)): MB of file data encoded and
 * decoded per CPU second in clear, with AES-256-GCM, with zlib level 1,
 * and with both, on incompressible (random) and on text-like data.
 * Process CPU time, not wall time, so a loaded machine changes the
 * figures less; the modes alternate within each round and the medians
 * are printed with each mode's ratio to "clear".
 *
 *   bench_seal [-s MB] [-r ROUNDS]     (default 256 MB, 5 rounds)
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <time.h>

#include "nsr/asm.h"
#include "nsr/crypt.h"
#include "nsr/err.h"

#define PIECE ((size_t)1 << 20) /* bytes per nsr_asm_enc_data call */
#define MAX_ROUNDS 99

/* A mode: name and transform. */
struct mode {
	const char *name;
	int compress, aes;
};

static const struct mode modes[] = {
	{"clear", 0, 0},
	{"aes", 0, 1},
	{"zlib1", 1, 0},
	{"zlib1+aes", 1, 1},
};

/* cpu_now - process CPU seconds. */
static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The encoded stream, kept for the decode pass. */
struct sink {
	uint8_t *p;
	size_t len, cap;
};

/* to_sink - append to the stream buffer. */
static int to_sink(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	if (s->len + n > s->cap)
		return NSR_ERR_NOSPACE;
	memcpy(s->p + s->len, p, n);
	s->len += n;
	return NSR_OK;
}

/* key_of - the bench's key for any id. */
static int key_of(void *ctx, const uint8_t *id, uint8_t *key)
{
	const struct nsr_crypt_key *k = ctx;

	if (memcmp(id, k->id, sizeof(k->id)) != 0)
		return -1;
	memcpy(key, k->key, sizeof(k->key));
	return 0;
}

/* encode - one file of n bytes of data through mode m into s. */
static int encode(const struct mode *m, const struct nsr_crypt_key *k,
		  const uint8_t *data, size_t n, struct sink *s)
{
	struct nsr_asm_header h = {0, 0, 1, 1700000000, "bench", "/b"};
	struct nsr_asm_xform x = {m->compress, m->aes ? k->key : NULL,
				  m->aes ? k->id : NULL};
	struct nsr_asm_file f;
	struct nsr_asm_enc *e = NULL;
	int rc;

	s->len = 0;
	memset(&f, 0, sizeof(f));
	f.type = NSR_ASM_REG;
	f.path = "/b/file";
	f.mode = 0644;
	f.size = n;
	rc = nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, to_sink, s);
	if (rc == NSR_OK && (m->compress || m->aes))
		rc = nsr_asm_enc_xform(e, &x);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_header(e, &h);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file(e, &f, NULL);
	for (size_t i = 0; rc == NSR_OK && i < n; i += PIECE)
		rc = nsr_asm_enc_data(e, data + i, NSR_MIN(PIECE, n - i));
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_end(e);
	nsr_asm_enc_free(e);
	return rc;
}

/* decode - decode s with the key; NSR_OK if it was whole. */
static int decode(const struct nsr_crypt_key *k, const struct sink *s)
{
	struct nsr_asm_dec_ops ops;
	struct nsr_asm_dec *d = NULL;
	int rc;

	memset(&ops, 0, sizeof(ops));
	ops.key = key_of;
	rc = nsr_asm_dec_new(&d, &ops, (void *)k);
	if (rc == NSR_OK)
		rc = nsr_asm_dec_feed(d, s->p, s->len);
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
	return rc;
}

/* cmp_double - qsort order. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median - of n values (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* run - every mode on data, rounds times; print medians. */
static int run(const char *what, const uint8_t *data, size_t n, int rounds,
	       const struct nsr_crypt_key *k, struct sink *s)
{
	enum { NM = NSR_ARRAY_SIZE(modes) };
	double enc[NM][MAX_ROUNDS], dec[NM][MAX_ROUNDS], size[NM] = {0};
	double mb = (double)n / 1e6, e0, d0;

	for (int r = 0; r < rounds; r++)
		for (size_t j = 0; j < NM; j++) {
			size_t i = (j + (size_t)r) % NM;
			double t0 = cpu_now(), t1;

			if (encode(&modes[i], k, data, n, s) != NSR_OK)
				return 1;
			t1 = cpu_now();
			if (decode(k, s) != NSR_OK)
				return 1;
			enc[i][r] = mb / (t1 - t0);
			dec[i][r] = mb / (cpu_now() - t1);
			size[i] = (double)s->len;
		}
	printf("%s data, %.0f MB, median of %d rounds (MB per CPU second):\n",
	       what, mb, rounds);
	e0 = median(enc[0], rounds);
	d0 = median(dec[0], rounds);
	for (size_t i = 0; i < NM; i++) {
		double e = median(enc[i], rounds), d = median(dec[i], rounds);

		printf("  %-10s encode %7.0f (%.2f x clear)  decode %7.0f "
		       "(%.2f x clear)  stream %.2f x data\n", modes[i].name,
		       e, e / e0, d, d / d0, size[i] / (double)n);
	}
	return 0;
}

/* text_like - words of a small vocabulary picked by a fixed generator,
 * lines of about 60 bytes: compresses to roughly a third with zlib. */
static void text_like(uint8_t *p, size_t n)
{
	static const char *const words[] = {
		"backup", "volume", "save", "set", "the", "of", "recover",
		"index", "client", "server", "data", "a", "to", "device",
		"pool", "level", "full", "incremental", "file", "system",
		"error", "ok", "2026", "node", "session", "stream", "block",
		"label", "and", "in", "is", "for",
	};
	uint64_t x = 88172645463325252ull;
	size_t i = 0, col = 0;

	while (i < n) {
		const char *w;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = words[x % NSR_ARRAY_SIZE(words)];
		for (; *w && i < n; w++, col++)
			p[i++] = (uint8_t)*w;
		if (i < n)
			p[i++] = col > 60 ? '\n' : ' ';
		col = col > 60 ? 0 : col + 1;
	}
}

/* main - options, data, the two runs. */
int main(int argc, char **argv)
{
	struct nsr_crypt_key k;
	struct sink s = {0};
	size_t n = (size_t)256 << 20;
	int rounds = 5, opt, rc;
	uint8_t *data;

	while ((opt = getopt(argc, argv, "s:r:")) != -1) {
		if (opt == 's' && atol(optarg) > 0)
			n = (size_t)atol(optarg) << 20;
		else if (opt == 'r' && atoi(optarg) > 0 &&
			 atoi(optarg) <= MAX_ROUNDS)
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: bench_seal [-s MB] "
				"[-r ROUNDS (1-%d)]\n", MAX_ROUNDS);
			return 2;
		}
	}
	data = malloc(n);
	s.cap = n + n / 8 + ((size_t)1 << 20);
	s.p = malloc(s.cap);
	if (data == NULL || s.p == NULL ||
	    nsr_crypt_derive("bench_seal", &k) != NSR_OK ||
	    nsr_crypt_random(data, n) != NSR_OK) {
		fprintf(stderr, "bench_seal: cannot set up\n");
		return 1;
	}
	rc = run("random", data, n, rounds, &k, &s);
	text_like(data, n);
	if (rc == 0)
		rc = run("text", data, n, rounds, &k, &s);
	if (rc)
		fprintf(stderr, "bench_seal: encode or decode failed\n");
	free(data);
	free(s.p);
	return rc;
}
