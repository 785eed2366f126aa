/*
 * fuzz_joblog.c - the job log decoder (nsr_jobd_log_decode, in the
 * nsrjobd client library): the "<seq> <time> <escaped text>\n" lines a
 * jobquery client receives from nsrjobd and prints.
 *
 * Byte 0 even: the rest (up to a NUL) is an encoded log from the wire.
 *   It must decode to NSR_OK or NSR_ERR_CORRUPT and nothing else; every
 *   line handed out re-encodes (nsr_jobd_log_encode) to a log that decodes
 *   to the same lines, and that encoding is a fixed point.  Bits 1..7 of
 *   byte 0, when not 0, make the callback stop at that line with a code
 *   of its own, which must come back unchanged after exactly that many
 *   calls.
 * Byte 0 odd: bytes 1..16 are a sequence number and a time, the rest (up
 *   to a NUL) a log line: encoding it and decoding the result must give
 *   back exactly that one line.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STOP_CODE 4242

/* The lines of a decoded log. */
struct lines {
	size_t n, cap;
	int64_t *seq, *time;
	char **text;
	size_t stop_at; /* 0: never stop */
};

/* collect - nsr_jobdb_log_fn: keep a copy of the line. */
static int collect(void *arg, int64_t seq, int64_t time, const char *line)
{
	struct lines *l = arg;

	if (line == NULL)
		abort();
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->seq = realloc(l->seq, l->cap * sizeof(*l->seq));
		l->time = realloc(l->time, l->cap * sizeof(*l->time));
		l->text = realloc(l->text, l->cap * sizeof(*l->text));
		if (!l->seq || !l->time || !l->text)
			abort();
	}
	l->seq[l->n] = seq;
	l->time[l->n] = time;
	l->text[l->n] = strdup(line);
	if (l->text[l->n] == NULL)
		abort();
	l->n++;
	return l->stop_at && l->n == l->stop_at ? STOP_CODE : 0;
}

/* lines_free - release the copies. */
static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->text[i]);
	free(l->seq);
	free(l->time);
	free(l->text);
	memset(l, 0, sizeof(*l));
}

/* encode_all - the log that says l. */
static void encode_all(const struct lines *l, struct nsr_buf *out)
{
	for (size_t i = 0; i < l->n; i++)
		if (nsr_jobd_log_encode(out, l->seq[i], l->time[i],
					l->text[i]) != NSR_OK)
			abort();
}

/* same_lines - equal line for line. */
static int same_lines(const struct lines *a, const struct lines *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->seq[i] != b->seq[i] || a->time[i] != b->time[i] ||
		    strcmp(a->text[i], b->text[i]) != 0)
			return 0;
	return 1;
}

/* decode_wire - an encoded log from the wire. */
static void decode_wire(const char *log, size_t stop_at)
{
	struct lines a = {0}, b = {0}, c = {0};
	struct nsr_buf e1, e2;
	int rc;

	a.stop_at = stop_at;
	rc = nsr_jobd_log_decode(log, collect, &a);
	if (rc == STOP_CODE) {
		if (stop_at == 0 || a.n != stop_at)
			abort();
	} else if (rc != NSR_OK && rc != NSR_ERR_CORRUPT) {
		abort();
	} else if (stop_at && a.n >= stop_at) {
		abort(); /* the stop was not honoured */
	}
	nsr_buf_init(&e1, 0);
	nsr_buf_init(&e2, 0);
	/* whatever was handed out, canonical or not, round-trips */
	encode_all(&a, &e1);
	if (nsr_jobd_log_decode(e1.len ? e1.data : "", collect, &b) !=
		    NSR_OK ||
	    !same_lines(&a, &b))
		abort();
	encode_all(&b, &e2);
	if (e1.len != e2.len || (e1.len && memcmp(e1.data, e2.data, e1.len)))
		abort();
	/* decoding is repeatable */
	if (rc == NSR_OK && nsr_jobd_log_decode(log, collect, &c) != NSR_OK)
		abort();
	lines_free(&a);
	lines_free(&b);
	lines_free(&c);
	nsr_buf_release(&e1);
	nsr_buf_release(&e2);
}

/* encode_one - one (seq, time, line) through encode and decode. */
static void encode_one(const uint8_t *p, size_t n)
{
	struct lines l = {0};
	struct nsr_buf e;
	int64_t seq, time;
	char *line;

	if (n < 16)
		return;
	seq = (int64_t)nsr_get_u64(p);
	time = (int64_t)nsr_get_u64(p + 8);
	line = strndup((const char *)p + 16, n - 16);
	if (line == NULL)
		return;
	nsr_buf_init(&e, 0);
	if (nsr_jobd_log_encode(&e, seq, time, line) != NSR_OK)
		abort();
	if (nsr_jobd_log_decode(e.data, collect, &l) != NSR_OK ||
	    l.n != 1 || l.seq[0] != seq || l.time[0] != time ||
	    strcmp(l.text[0], line) != 0)
		abort();
	lines_free(&l);
	nsr_buf_release(&e);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *log;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		encode_one(data + 1, size - 1);
		return 0;
	}
	log = strndup((const char *)data + 1, size - 1);
	if (log == NULL)
		return 0;
	decode_wire(log, data[0] >> 1);
	free(log);
	return 0;
}
