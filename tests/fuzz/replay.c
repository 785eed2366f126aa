/*
 * replay.c - runs a fuzz target without libFuzzer, as an ordinary test:
 * every file of the seed corpus directory given as argv[1], then a fixed
 * number of deterministic mutations of each seed (bit flips, truncations,
 * byte overwrites, random splices).  Any crash, sanitizer report or hang is
 * a test failure.  NSR_FUZZ_ITER sets the mutations per seed (default 300).
 */
#include "nsr/compat.h"

#include <dirent.h>

#include "nsr/buf.h"
#include "nsr/fileio.h"
#include "nsr/xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* rng - xorshift64*, deterministic so failures reproduce. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* run_copy - call the target on a private heap copy (so ASan sees overruns). */
static void run_copy(const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	if (!c)
		abort();
	memcpy(c, p, n);
	LLVMFuzzerTestOneInput(c, n);
	free(c);
}

/* mutate - one deterministic mutation of seed into out. */
static size_t mutate(const uint8_t *seed, size_t n, uint8_t *out, size_t cap)
{
	size_t len = n, i, k;

	memcpy(out, seed, n);
	switch (rng() % 5) {
	case 0: /* flip bits */
		for (k = 0; len && k < 1 + rng() % 4; k++) {
			i = rng() % len;
			out[i] ^= (uint8_t)(1u << (rng() % 8));
		}
		break;
	case 1: /* truncate */
		len = len ? rng() % len : 0;
		break;
	case 2: /* overwrite bytes with interesting values */
		for (k = 0; len && k < 1 + rng() % 4; k++) {
			static const uint8_t vals[] = {0, 0xff, 0x7f, 0x80, 1};
			out[rng() % len] = vals[rng() % sizeof(vals)];
		}
		break;
	case 3: /* random tail */
		for (i = len ? rng() % len : 0; i < len; i++)
			out[i] = (uint8_t)rng();
		break;
	default: /* append garbage */
		k = rng() % 64;
		for (i = 0; i < k && len < cap; i++)
			out[len++] = (uint8_t)rng();
		break;
	}
	return len;
}

int main(int argc, char **argv)
{
	const char *env = getenv("NSR_FUZZ_ITER");
	long iters = env ? atol(env) : 300;
	struct dirent *de;
	DIR *d;
	int nseeds = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	/* Always include the empty input and some random inputs. */
	run_copy((const uint8_t *)"", 0);
	for (long i = 0; i < iters; i++) {
		uint8_t buf[512];
		size_t n = rng() % sizeof(buf);

		for (size_t j = 0; j < n; j++)
			buf[j] = (uint8_t)rng();
		run_copy(buf, n);
	}
	d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "%s: cannot open corpus %s\n", argv[0],
			argv[1]);
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		struct nsr_buf b;
		char *path;
		uint8_t *out;

		if (de->d_name[0] == '.')
			continue;
		path = nsr_xcheck(nsr_path_join(argv[1], de->d_name));
		nsr_buf_init(&b, 16u << 20);
		if (nsr_file_read(path, &b, 16u << 20) != 0) {
			fprintf(stderr, "cannot read %s\n", path);
			return 2;
		}
		run_copy((const uint8_t *)b.data, b.len);
		out = malloc(b.len + 64);
		if (!out)
			abort();
		for (long i = 0; i < iters; i++) {
			size_t n = mutate((const uint8_t *)b.data, b.len, out,
					  b.len + 64);

			run_copy(out, n);
		}
		free(out);
		nsr_buf_release(&b);
		free(path);
		nseeds++;
	}
	closedir(d);
	printf("%s: %d seeds, %ld mutations each: no crash\n", argv[0], nseeds,
	       iters);
	return 0;
}
