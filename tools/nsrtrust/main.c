/*
 * nsrtrust - the datazone's host certificates (nsr/tls.h, nsrtrust(8)).
 *
 *   nsrtrust [-R root] list                 certificates issued, state
 *   nsrtrust [-R root] request [-n host]    enrolment request (PEM) out
 *   nsrtrust [-R root] accept [FILE]        sign a request: bundle out
 *   nsrtrust [-R root] install [FILE]       install a bundle here
 *   nsrtrust [-R root] revoke HOST          revoke every cert of HOST
 *
 * FILE "-" or absent is standard input.  Exit 0 done, 1 failed, 2 usage.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/tls.h"

#define INPUT_MAX (1 << 20)

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrtrust [-R root] list\n"
		"       nsrtrust [-R root] request [-n host]\n"
		"       nsrtrust [-R root] accept [request-file]\n"
		"       nsrtrust [-R root] install [bundle-file]\n"
		"       nsrtrust [-R root] revoke host\n"
		"  -R root   server root (env NSR_ROOT, default %s); the "
		"files are in root/tls\n"
		"  -n host   the name to certify (default: this host's)\n"
		"  list      certificates this CA issued: host, serial, "
		"expiry, state\n"
		"  request   on a new client or storage node: print an "
		"enrolment request\n"
		"  accept    on the server: sign a request, print the "
		"certificate bundle\n"
		"  install   on the new host: install the bundle (no restart "
		"needed)\n"
		"  revoke    on the server: revoke the host's certificates; "
		"its calls are refused from the next one on\n",
		NSR_DEFAULT_ROOT);
}

/* read_input - the whole file (or stdin for NULL/"-") into b. */
static int read_input(const char *path, struct nsr_buf *b)
{
	char chunk[4096];
	size_t n;

	if (path && strcmp(path, "-") != 0)
		return nsr_file_read(path, b, INPUT_MAX);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		if (b->len + n > INPUT_MAX || nsr_buf_add(b, chunk, n))
			return NSR_ERR_TOOBIG;
	return ferror(stdin) ? NSR_ERR_SYSTEM : NSR_OK;
}

/* run - one subcommand; the exit status. */
static int run(const char *root, const char *cmd, const char *arg,
	       const char *host)
{
	struct nsr_buf in, out, err;
	char name[NSR_HOST_MAX + 1];
	int rc;

	nsr_buf_init(&in, 0);
	nsr_buf_init(&out, 0);
	nsr_buf_init(&err, 0);
	if (strcmp(cmd, "list") == 0) {
		rc = nsr_tls_list(root, &out, &err);
	} else if (strcmp(cmd, "request") == 0) {
		if (!host) {
			nsr_host_self(name, sizeof(name));
			host = name;
		}
		rc = nsr_tls_request(root, host, &out, &err);
	} else if (strcmp(cmd, "accept") == 0 ||
		   strcmp(cmd, "install") == 0) {
		rc = read_input(arg, &in);
		if (rc)
			nsr_buf_addf(&err, "cannot read %s: %s",
				     arg ? arg : "standard input",
				     rc == NSR_ERR_NOTFOUND ? "no such file"
							    : nsr_strerror(rc));
		else if (cmd[0] == 'a')
			rc = nsr_tls_accept(root, in.data, in.len, &out, name,
					    sizeof(name), &err);
		else
			rc = nsr_tls_install(root, in.data, in.len, &err);
		if (rc == NSR_OK && cmd[0] == 'a')
			fprintf(stderr, "nsrtrust: certified %s\n", name);
		if (rc == NSR_OK && cmd[0] == 'i')
			fprintf(stderr, "nsrtrust: installed %s/tls/host.pem "
				"and ca.pem\n", root);
	} else {
		rc = nsr_tls_revoke(root, arg, &err);
		if (rc == 0) {
			nsr_buf_addf(&err, "no certificate issued to %s under "
				     "%s/tls (see nsrtrust list)", arg, root);
			rc = NSR_ERR_NOTFOUND;
		} else if (rc > 0) {
			fprintf(stderr, "nsrtrust: revoked %d certificate%s "
				"of %s\n", rc, rc == 1 ? "" : "s", arg);
			rc = NSR_OK;
		}
	}
	fwrite(out.data, 1, out.len, stdout);
	if (rc != NSR_OK)
		fprintf(stderr, "nsrtrust: %s\n",
			err.len ? err.data : nsr_strerror(rc));
	nsr_buf_release(&in);
	nsr_buf_release(&out);
	nsr_buf_release(&err);
	return rc == NSR_OK ? 0 : 1;
}

/* main - parse options and the subcommand. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *root = getenv("NSR_ROOT"), *host = NULL, *cmd;
	int ch, nargs;

	if (!root || !*root)
		root = NSR_DEFAULT_ROOT;
	while ((ch = getopt_long(argc, argv, "+R:n:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'R':
			root = optarg;
			break;
		case 'n':
			host = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	nargs = argc - optind - 1;
	if ((strcmp(cmd, "list") == 0 && nargs == 0) ||
	    (strcmp(cmd, "request") == 0 && nargs == 0) ||
	    ((strcmp(cmd, "accept") == 0 || strcmp(cmd, "install") == 0) &&
	     nargs <= 1) ||
	    (strcmp(cmd, "revoke") == 0 && nargs == 1))
		return run(root, cmd, nargs ? argv[optind + 1] : NULL, host);
	fprintf(stderr, "nsrtrust: unknown command or wrong arguments: %s\n",
		cmd);
	usage(stderr);
	return 2;
}
