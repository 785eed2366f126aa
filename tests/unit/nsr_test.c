/*
 * nsr_test.c - temporary directories for unit tests.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/fileio.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

/* nsr_test_tmpdir - fresh private directory for one test. */
char *nsr_test_tmpdir(const char *tag)
{
	const char *base = getenv("NSR_TEST_TMPDIR");
	char *tmpl;

	if (!base || !*base)
		base = "/tmp";
	nsr_mkdir_p(base, 0755);
	tmpl = nsr_xasprintf("%s/%s.XXXXXX", base, tag);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmpl, strerror(errno));
		abort();
	}
	return tmpl;
}

/* empty_or_descend - in directory fd, remove every non-directory until
 * a directory turns up: its malloc'ed name, or NULL when fd is empty. */
static char *empty_or_descend(int fd)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	char *sub = NULL;
	struct stat st;

	if (d == NULL) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while (sub == NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			sub = nsr_xstrdup(de->d_name);
		else
			unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	return sub;
}

/* nsr_test_rmrf - remove a tree (no symlink following) of any depth and
 * path length, holding one descriptor: down into the first directory
 * found, back up through "..", by the names kept on the way down. */
void nsr_test_rmrf(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char **names = NULL;
	size_t depth = 0;

	if (fd < 0) {
		unlink(path);
		return;
	}
	for (long step = 0; step < 100000000L; step++) {
		char *sub = empty_or_descend(fd);
		int next;

		if (sub != NULL) {
			fchmodat(fd, sub, 0700, 0);
			next = openat(fd, sub, O_RDONLY | O_DIRECTORY |
						       O_NOFOLLOW | O_CLOEXEC);
			if (next < 0) {
				free(sub);
				break;
			}
			names = nsr_xrealloc(names,
					     (depth + 1) * sizeof(*names));
			names[depth++] = sub;
		} else if (depth == 0) {
			break;
		} else {
			next = openat(fd, "..", O_RDONLY | O_DIRECTORY |
							O_CLOEXEC);
			if (next < 0)
				break;
			depth--;
			unlinkat(next, names[depth], AT_REMOVEDIR);
			free(names[depth]);
		}
		close(fd);
		fd = next;
	}
	close(fd);
	while (depth > 0)
		free(names[--depth]);
	free(names);
	rmdir(path);
}

/* nsr_test_mkchain - a chain of n nested directories below fd. */
int nsr_test_mkchain(int fd, int n, char first, size_t len)
{
	char name[256];

	if (len >= sizeof(name))
		abort();
	for (int i = 0; i < n; i++) {
		int next;

		memset(name, first + i % 20, len);
		name[len] = '\0';
		if (mkdirat(fd, name, 0755) != 0)
			abort();
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			abort();
		close(fd);
		fd = next;
	}
	return fd;
}

/* nsr_test_path - "dir/name" in a rotating static buffer. */
const char *nsr_test_path(const char *dir, const char *name)
{
	static char p[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* nsr_test_mkfile - create dir/name holding text. */
void nsr_test_mkfile(const char *dir, const char *name, const char *text)
{
	int fd = open(nsr_test_path(dir, name),
		      O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* nsr_test_cached - resident pages of a range of a file (mincore). */
size_t nsr_test_cached(const char *path, uint64_t off, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (len + pg - 1) / pg;
	unsigned char *vec = calloc(n, 1);
	int fd = open(path, O_RDONLY);
	size_t in = 0;
	void *m;

	assert_non_null(vec);
	assert_true(fd >= 0);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, len, vec), 0);
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	munmap(m, len);
	close(fd);
	free(vec);
	return in;
}
