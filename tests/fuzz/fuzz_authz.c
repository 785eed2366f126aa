/*
 * fuzz_authz.c - what a caller states about itself: the user name of an
 * NSR_AUTH_USER credential (every call may carry one) and the request
 * line a local process sends to nsrexecd's vouching socket.  Byte 0
 * picks the decoder, the rest is the input:
 *   even  nsr_rpc_vouch_parse, the rest up to its first NUL as the line
 *   odd   nsr_rpc_cred_user, the rest as the credential's body (NULs too)
 * Each is held to a reference reading written here from the grammar (in
 * nsr/rpc.h): accepted exactly when the reference accepts, with the same
 * fields; an accepted request formats back to the same line and an
 * accepted name is the credential's bytes.  A disagreement aborts.
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINE_MAX_ 600

/* ref_number - decimal, no sign, "0" or no leading zero, <= max. */
static int ref_number(const char *p, size_t n, unsigned long long max,
		      unsigned long long *v)
{
	unsigned long long x = 0;

	if (n == 0 || n > 10)
		return 0;
	if (n > 1 && p[0] == '0')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(p[i] >= '0' && p[i] <= '9'))
			return 0;
		x = 10 * x + (unsigned long long)(p[i] - '0');
	}
	*v = x;
	return x <= max;
}

/* check_vouch - parse, compare with the reference, format back. */
static void check_vouch(const char *line)
{
	struct nsr_vouch_req r;
	const char *sp[3];
	unsigned long long v[3] = {0, 0, 0};
	char out[LINE_MAX_ + 2];
	size_t len = strlen(line), nsp = 0, hl;
	int ok, rc = nsr_rpc_vouch_parse(line, &r);

	for (size_t i = 0; i < len; i++)
		if (line[i] == ' ') {
			if (nsp < 3)
				sp[nsp] = line + i;
			nsp++;
		}
	ok = nsp == 3;
	hl = ok ? (size_t)(sp[0] - line) : 0;
	for (size_t i = 0; ok && i < hl; i++)
		ok = (unsigned char)line[i] > 0x20 &&
		     (unsigned char)line[i] != 0x7f;
	ok = ok && hl >= 1 && hl <= 255 &&
	     ref_number(sp[0] + 1, (size_t)(sp[1] - sp[0] - 1), 65535,
			&v[0]) &&
	     v[0] >= 1 &&
	     ref_number(sp[1] + 1, (size_t)(sp[2] - sp[1] - 1), 0xffffffffULL,
			&v[1]) &&
	     ref_number(sp[2] + 1, strlen(sp[2] + 1), 0xffffffffULL, &v[2]);
	if (ok != (rc == NSR_OK))
		abort();
	if (!ok)
		return;
	if (strlen(r.host) != hl || memcmp(r.host, line, hl) != 0 ||
	    (unsigned long long)r.port != v[0] || r.prog != v[1] ||
	    r.vers != v[2])
		abort();
	if (nsr_rpc_vouch_format(&r, out, sizeof(out)) != NSR_OK ||
	    strlen(out) != len + 1 || memcmp(out, line, len) != 0 ||
	    out[len] != '\n')
		abort();
}

/* ref_user - 1 to 64 bytes of [A-Za-z0-9._-], '$' only last, not
 * starting with '-' or '.'. */
static int ref_user(const uint8_t *p, size_t n)
{
	if (n < 1 || n > 64 || p[0] == '-' || p[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (!alnum && c != '.' && c != '_' && c != '-' &&
		    !(c == '$' && i == n - 1))
			return 0;
	}
	return 1;
}

/* check_cred - the credential's name against the reference. */
static void check_cred(const uint8_t *p, size_t n)
{
	char name[NSR_RPC_USER_MAX + 1];
	int got = nsr_rpc_cred_user(p, n, name);

	if (got != ref_user(p, n))
		abort();
	if (got && (strlen(name) != n || memcmp(name, p, n) != 0))
		abort();
	if (!got && name[0] != '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[LINE_MAX_ + 1];
	size_t n;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		check_cred(data + 1, size - 1);
		return 0;
	}
	n = size - 1 > LINE_MAX_ ? LINE_MAX_ : size - 1;
	memcpy(line, data + 1, n);
	line[n] = '\0';
	check_vouch(line);
	return 0;
}
