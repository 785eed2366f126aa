/*
 * err.h - the one table of library error codes.
 *
 * Library functions return NSR_OK (0) or one of the negative codes below and
 * never log or exit; programs decide.  NSR_ERR_SYSTEM means errno holds the
 * detail and is left meaningful by the function that returned it.
 */
#ifndef NSR_ERR_H
#define NSR_ERR_H

enum nsr_err {
	NSR_OK = 0,
	NSR_ERR_NOMEM = -1,	   /* allocation failed */
	NSR_ERR_SYSTEM = -2,	   /* system call failed; see errno */
	NSR_ERR_IO = -3,	   /* I/O error on a device or file */
	NSR_ERR_CORRUPT = -4,	   /* data on disk/wire is malformed */
	NSR_ERR_INVAL = -5,	   /* invalid argument */
	NSR_ERR_NOTFOUND = -6,	   /* no such object */
	NSR_ERR_EXISTS = -7,	   /* object already exists */
	NSR_ERR_TOOBIG = -8,	   /* over a configured size limit */
	NSR_ERR_TRUNCATED = -9,	   /* input ends early */
	NSR_ERR_BUSY = -10,	   /* resource in use / locked */
	NSR_ERR_NOSPACE = -11,	   /* no space left (disk full) */
	NSR_ERR_RPC = -12,	   /* RPC transport failure */
	NSR_ERR_PROTO = -13,	   /* protocol violation by the peer */
	NSR_ERR_TIMEOUT = -14,	   /* operation timed out */
	NSR_ERR_READONLY = -15,	   /* write to a read-only object */
	NSR_ERR_CHECKSUM = -16,	   /* checksum mismatch */
	NSR_ERR_EOM = -17,	   /* end of medium reached */
	NSR_ERR_EOF = -18,	   /* filemark / end of file */
	NSR_ERR_EOD = -19,	   /* end of recorded data */
	NSR_ERR_STATE = -20,	   /* object is in an error state (sticky) */
	NSR_ERR_UNSUPPORTED = -21, /* operation not supported */
	NSR_ERR_PERM = -22,	   /* permission denied */
	NSR_ERR_SYNTAX = -23,	   /* syntax error in a language/spec */
	NSR_ERR_LIMIT = -24,	   /* a bound (count, parallelism) reached */
	NSR_ERR_CONNECT = -25,	   /* cannot connect to a peer */
	NSR_ERR_MISMATCH =
		-26, /* identity/size mismatch (volume id, block size) */
	NSR_ERR_AGAIN = -27,  /* try again later */
	NSR_ERR_NOHOST = -28, /* a host name does not resolve */
	NSR_ERR_WAIT = -29,   /* not yet: ask again with the ticket given */
};

/* nsr_strerror - a static English string for an nsr_err code. */
const char *nsr_strerror(int rc);

#endif /* NSR_ERR_H */
