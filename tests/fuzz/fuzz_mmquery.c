/*
 * fuzz_mmquery.c - mminfo -q queryspecs, -t times and -r reportspecs as
 * typed by users: garbage must give an error pointing inside the text,
 * never a crash; a failed spec must leave the query as it was.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmquery.h"
#include "nsr/mmreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* try_report - compile text as a -r spec and print one empty row. */
static void try_report(const char *text)
{
	struct nsr_mmquery_error err;
	struct nsr_mmreport *r = NULL;
	struct mmdb_ss_row row;
	struct nsr_buf out;

	if (nsr_mmreport_new(NSR_MMREPORT_CUSTOM, text, &r, &err) != NSR_OK) {
		if (err.offset > strlen(text))
			abort();
		return;
	}
	memset(&row, 0, sizeof(row));
	nsr_buf_init(&out, 0);
	if (nsr_mmreport_header(r, &out) != NSR_OK ||
	    nsr_mmreport_row(r, &row, &out) != NSR_OK)
		abort();
	nsr_buf_release(&out);
	nsr_mmreport_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_mmquery_error err;
	struct nsr_mmquery *q = NULL;
	char *text = strndup((const char *)data, size);
	size_t before;
	int rc;

	if (!text)
		return 0;
	setenv("TZ", "UTC", 0);
	if (nsr_mmquery_new(&q) != NSR_OK)
		goto out;
	if (nsr_mmquery_add_client(q, "keep") != NSR_OK)
		goto out;
	before = nsr_mmquery_get(q)->npreds;
	rc = nsr_mmquery_add_spec(q, text, (time_t)1717597815, &err);
	if (rc == NSR_ERR_SYNTAX && err.offset > strlen(text))
		abort();
	if (rc != NSR_OK && nsr_mmquery_get(q)->npreds != before)
		abort();
	if (rc == NSR_OK) {
		const struct mmdb_query *mq = nsr_mmquery_get(q);

		for (size_t i = 0; i < mq->npreds; i++)
			if (mq->preds[i].attr >= MMDB_A_COUNT)
				abort();
	}
	rc = nsr_mmquery_add_time(q, text, (time_t)1717597815, &err);
	if (rc == NSR_ERR_SYNTAX && err.offset > strlen(text))
		abort();
	try_report(text);
out:
	nsr_mmquery_free(q);
	free(text);
	return 0;
}
