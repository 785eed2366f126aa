/*
 * devpath.c - a device's path is an administrator's decision and names
 * what is there (nsrd(8), AUTHORIZATION): an AFTD's directory and a
 * tape's device node must exist when the device resource is created or
 * its path changed; nothing is created on demand.  A vtape (a file that
 * behaves like a tape, nsr_vtape(5)) is an existing regular file or a
 * new one in an existing directory, made by its mover at the first
 * label.  Only paths on the server itself are checked here: a device on
 * a storage node (rd=HOST:PATH) is checked by that node's mover when it
 * opens the device.
 */
#include "nsr/compat.h"

#include <sys/stat.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsrd.h"

/* parent_is_dir - 1 if the directory holding path exists. */
static int parent_is_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n >= sizeof(dir))
		return 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return stat(n ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

/* nsrd_device_path_check - NSR_OK if a local device's path names what
 * its media type needs; else NSR_ERR_INVAL and why says what to do. */
int nsrd_device_path_check(const char *name, const char *type,
			   const char *path, struct nsr_buf *why)
{
	struct stat st;
	int there = stat(path, &st) == 0;

	if (type && strcmp(type, "tape") == 0) {
		if (there && S_ISCHR(st.st_mode))
			return NSR_OK;
		nsr_buf_addf(why, "device %s: %s is not a tape device node; "
			     "give the path of the drive (as /dev/nst0)",
			     name, path);
		return NSR_ERR_INVAL;
	}
	if (type && strcmp(type, "vtape") == 0) {
		if ((there && S_ISREG(st.st_mode)) ||
		    (!there && errno == ENOENT && parent_is_dir(path)))
			return NSR_OK;
		nsr_buf_addf(why, "device %s: %s is neither a vtape file nor "
			     "a new file in an existing directory; create "
			     "the directory first", name, path);
		return NSR_ERR_INVAL;
	}
	if (there && S_ISDIR(st.st_mode))
		return NSR_OK;
	nsr_buf_addf(why, "device %s: %s is not an existing directory; "
		     "create it first (mkdir -p %s), the server does not",
		     name, path, path);
	return NSR_ERR_INVAL;
}
