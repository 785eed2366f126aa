/*
 * mounts.c - the local file systems of a mount table (mounts.h).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mounts.h"

/* Types that hold no data of the host's own: kernel views, memory,
 * containers' plumbing, and file systems of other hosts. */
static const char *const not_local[] = {
	"proc", "sysfs", "devtmpfs", "devpts", "tmpfs", "ramfs", "rootfs",
	"securityfs", "cgroup", "cgroup2", "pstore", "bpf", "debugfs",
	"tracefs", "configfs", "fusectl", "mqueue", "hugetlbfs", "autofs",
	"binfmt_misc", "rpc_pipefs", "nsfs", "efivarfs", "selinuxfs",
	"squashfs", "iso9660", "devfs", "usbfs", "nfsd",
	/* network */
	"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "ceph",
	"glusterfs", "9p", "lustre", "gpfs", "davfs", "fuse", "fuseblk",
	"sshfs",
};

/* nsr_mounts_is_local - a local, non-pseudo file system type. */
int nsr_mounts_is_local(const char *fstype)
{
	if (strncmp(fstype, "fuse.", 5) == 0)
		return 0;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(not_local); i++)
		if (strcmp(fstype, not_local[i]) == 0)
			return 0;
	return *fstype != '\0';
}

/* unescape - decode the table's \ooo escapes in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			int c = (s[1] - '0') * 64 + (s[2] - '0') * 8 +
				(s[3] - '0');

			if (c) {
				*o++ = (char)c;
				s += 3;
				continue;
			}
		}
		*o++ = *s;
	}
	*o = '\0';
}

/* add_line - one "DEV DIR TYPE OPTS ..." line of len bytes. */
static int add_line(const char *line, size_t len, struct nsr_mounts *m)
{
	char buf[4096], *save = NULL, *dev, *dir, *type;

	if (len >= sizeof(buf))
		return NSR_ERR_CORRUPT;
	memcpy(buf, line, len);
	buf[len] = '\0';
	dev = strtok_r(buf, " \t", &save);
	if (!dev)
		return NSR_OK; /* a blank line */
	dir = strtok_r(NULL, " \t", &save);
	type = strtok_r(NULL, " \t", &save);
	if (!dir || !type)
		return NSR_ERR_CORRUPT;
	unescape(dir);
	if (dir[0] != '/' || !nsr_mounts_is_local(type))
		return NSR_OK;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->path[i], dir) == 0)
			return NSR_OK;
	if (m->n == NSR_MOUNTS_MAX)
		return NSR_ERR_LIMIT;
	m->path[m->n] = strdup(dir);
	if (!m->path[m->n])
		return NSR_ERR_NOMEM;
	m->n++;
	return NSR_OK;
}

/* nsr_mounts_parse - the local mount points of a table. */
int nsr_mounts_parse(const char *text, size_t len, struct nsr_mounts *m)
{
	size_t start = 0;
	int rc = NSR_OK;

	m->n = 0;
	for (size_t i = 0; i <= len && rc == NSR_OK; i++) {
		if (i < len && text[i] != '\n')
			continue;
		if (memchr(text + start, '\0', i - start))
			return NSR_ERR_CORRUPT;
		rc = add_line(text + start, i - start, m);
		start = i + 1;
	}
	return rc;
}

/* nsr_mounts_read - the local mount points of a table file. */
int nsr_mounts_read(const char *path, struct nsr_mounts *m)
{
	struct nsr_buf b;
	int rc;

	m->n = 0;
	nsr_buf_init(&b, 0);
	rc = nsr_file_read(path ? path : "/proc/self/mounts", &b, 1 << 20);
	if (rc == NSR_OK)
		rc = nsr_mounts_parse(b.data ? b.data : "", b.len, m);
	nsr_buf_release(&b);
	return rc;
}

/* nsr_mounts_free - free the paths. */
void nsr_mounts_free(struct nsr_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->path[i]);
	m->n = 0;
}
