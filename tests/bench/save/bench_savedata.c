/*
 * bench_savedata.c - the data of the save benchmark (run-save.sh), made
 * and evicted without root.
 *
 *   bench_savedata make DIR NLARGE LARGE_MB NSMALL
 *	DIR/large/l<i>: NLARGE files of LARGE_MB megabytes each;
 *	DIR/small/d<k>/f<i>: NSMALL files of 4 to 64 KiB (uniform, in
 *	1 KiB steps), 1000 to a directory.  The contents are a xorshift
 *	stream (incompressible, no two blocks alike), the sizes a fixed
 *	sequence: every run makes the same data.
 *   bench_savedata evict DIR
 *	drop the page cache of every regular file under DIR
 *	(posix_fadvise DONTNEED after fdatasync): a cold read of the data
 *	without root, short of the inode and directory caches, which only
 *	drop_caches (root) empties.
 *
 * Prints what it did; exit 0, 1 on an error (with the reason), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNIT ((size_t)1 << 20)

static uint64_t rng = 0x9e3779b97f4a7c15u;

/* next - the next xorshift64 value. */
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* fill - n bytes (a multiple of 8) of the stream. */
static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t v = next();

		memcpy(p + i, &v, 8);
	}
}

/* put - write a file of size bytes of the stream through buf. */
static int put(const char *path, uint64_t size, uint8_t *buf)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		fprintf(stderr, "bench_savedata: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	for (uint64_t done = 0; done < size;) {
		size_t n = size - done < UNIT ? (size_t)(size - done) : UNIT;

		fill(buf, (n + 7) & ~(size_t)7);
		if (write(fd, buf, n) != (ssize_t)n) {
			fprintf(stderr, "bench_savedata: %s: %s\n", path,
				strerror(errno));
			close(fd);
			return -1;
		}
		done += n;
	}
	return close(fd);
}

/* mkdir_p - make dir (its parent exists); an existing one is fine. */
static int mkdir_p(const char *dir)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench_savedata: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* make - the large and the small files under dir. */
static int make(const char *dir, long nlarge, long large_mb, long nsmall)
{
	uint8_t *buf = malloc(UNIT + 8);
	char path[4096];
	uint64_t small_bytes = 0;

	if (buf == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/large", dir);
	if (mkdir_p(dir) || mkdir_p(path))
		return -1;
	for (long i = 0; i < nlarge; i++) {
		snprintf(path, sizeof(path), "%s/large/l%ld", dir, i);
		if (put(path, (uint64_t)large_mb * UNIT, buf))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/small", dir);
	if (mkdir_p(path))
		return -1;
	for (long i = 0; i < nsmall; i++) {
		uint64_t size = (4 + next() % 61) * 1024;

		if (i % 1000 == 0) {
			snprintf(path, sizeof(path), "%s/small/d%ld", dir,
				 i / 1000);
			if (mkdir_p(path))
				return -1;
		}
		snprintf(path, sizeof(path), "%s/small/d%ld/f%ld", dir,
			 i / 1000, i);
		if (put(path, size, buf))
			return -1;
		small_bytes += size;
	}
	free(buf);
	printf("made %ld x %ld MB and %ld small files (%llu bytes) in %s\n",
	       nlarge, large_mb, nsmall, (unsigned long long)small_bytes,
	       dir);
	return 0;
}

static long evicted;

/* evict_one - nftw callback: drop a regular file's cached pages. */
static int evict_one(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	int fd;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	evicted++;
	return 0;
}

/* main - make or evict. */
int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "make") == 0)
		return make(argv[2], atol(argv[3]), atol(argv[4]),
			    atol(argv[5])) ? 1 : 0;
	if (argc == 3 && strcmp(argv[1], "evict") == 0) {
		if (nftw(argv[2], evict_one, 64, FTW_PHYS) != 0) {
			fprintf(stderr, "bench_savedata: %s: %s\n", argv[2],
				strerror(errno));
			return 1;
		}
		printf("evicted %ld files under %s\n", evicted, argv[2]);
		return 0;
	}
	fprintf(stderr, "usage: bench_savedata make DIR NLARGE LARGE_MB "
		"NSMALL\n       bench_savedata evict DIR\n");
	return 2;
}
