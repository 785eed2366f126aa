/*
 * fuzz_sched.c - NSR schedules, group start times and intervals typed by
 * administrators (sched.h).
 *
 * Byte 0 mod 3 chooses the parser: 0 a schedule (the rest split at
 * newlines: period, action, then one override a line), 1 a start time,
 * 2 an interval.  A refusal must say why; what parses is written back in
 * canonical form and must parse to the same schedule or time.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/sched.h"

#define MAX_LINES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nsr_sched g_a, g_b;

/* check_refusal - an error is NSR_ERR_SYNTAX with a reason. */
static void check_refusal(int rc, const struct nsr_buf *why)
{
	if (rc != NSR_ERR_SYNTAX || !why->len)
		abort();
}

/* canonical - g_a written back as an action and overrides, parsed into
 * g_b, which must equal g_a. */
static void canonical(void)
{
	struct nsr_buf action, ovt;
	const char *ov[NSR_SCHED_MAX_OVERRIDES];
	size_t off[NSR_SCHED_MAX_OVERRIDES];

	nsr_buf_init(&action, 0);
	nsr_buf_init(&ovt, 0);
	for (unsigned i = 0; i < g_a.nlevels; i++)
		nsr_buf_addf(&action, "%s ",
			     nsr_sched_level_name(g_a.levels[i]));
	for (size_t i = 0; i < g_a.nover; i++) {
		off[i] = ovt.len;
		nsr_buf_addf(&ovt, "%s %04d-%02d-%02d",
			     nsr_sched_level_name(g_a.over[i].level),
			     g_a.over[i].year, g_a.over[i].mon,
			     g_a.over[i].mday);
		nsr_buf_addch(&ovt, '\0');
	}
	for (size_t i = 0; i < g_a.nover; i++)
		ov[i] = ovt.data + off[i];
	if (nsr_sched_parse(g_a.period ? "Month" : "Week", action.data, ov,
			    g_a.nover, &g_b, NULL) != NSR_OK ||
	    g_b.nlevels != g_a.nlevels || g_b.nover != g_a.nover ||
	    memcmp(g_a.levels, g_b.levels, sizeof(g_a.levels)) != 0 ||
	    memcmp(g_a.over, g_b.over, g_a.nover * sizeof(g_a.over[0])))
		abort();
	for (int d = 1; d <= 31; d++)
		if (nsr_sched_level_on(&g_a, 2026, 1, d, d % 7) !=
		    nsr_sched_level_on(&g_b, 2026, 1, d, d % 7))
			abort();
	nsr_buf_release(&action);
	nsr_buf_release(&ovt);
}

/* schedule - text as period, action and override lines. */
static void schedule(char *text)
{
	const char *line[MAX_LINES];
	struct nsr_buf why;
	size_t n = 0;
	char *save = NULL;
	int rc;

	for (char *t = strtok_r(text, "\n", &save); t && n < MAX_LINES;
	     t = strtok_r(NULL, "\n", &save))
		line[n++] = t;
	nsr_buf_init(&why, 0);
	rc = nsr_sched_parse(n > 0 ? line[0] : NULL, n > 1 ? line[1] : NULL,
			     line + 2, n > 2 ? n - 2 : 0, &g_a, &why);
	if (rc == NSR_OK)
		canonical();
	else
		check_refusal(rc, &why);
	nsr_buf_release(&why);
}

/* hhmm - a start time (start) or an interval. */
static void hhmm(const char *text, int start)
{
	struct nsr_buf why;
	char back[16];
	int s = -1, s2 = -1, rc;

	nsr_buf_init(&why, 0);
	rc = start ? nsr_sched_parse_start(text, &s, &why)
		   : nsr_sched_parse_interval(text, &s, &why);
	if (rc != NSR_OK) {
		check_refusal(rc, &why);
	} else {
		if (s < 0 || s > 86400 || (start && s == 86400) ||
		    (!start && s == 0))
			abort();
		snprintf(back, sizeof(back), "%02d:%02d", s / 3600,
			 s % 3600 / 60);
		rc = start ? nsr_sched_parse_start(back, &s2, NULL)
			   : nsr_sched_parse_interval(back, &s2, NULL);
		if (rc != NSR_OK || s2 != s)
			abort();
		if (start && nsr_sched_next_run(1795564800, s, 86400) <=
				     1795564800)
			abort();
	}
	nsr_buf_release(&why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1 || size > 8192)
		return 0;
	text = strndup((const char *)data + 1, size - 1);
	if (!text)
		return 0;
	setenv("TZ", "UTC", 0);
	if (data[0] % 3 == 0)
		schedule(text);
	else
		hhmm(text, data[0] % 3 == 1);
	free(text);
	return 0;
}
