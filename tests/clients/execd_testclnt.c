/*
 * execd_testclnt - test helper (not installed): has a host's nsrexecd run
 * save through the client library, as nsrd's scheduler does, and waits.
 *
 *   execd_testclnt HOST SERVER CLIENT LEVEL SAVESET...
 *
 * Prints "run N", then per save set "SAVESET state S exit E signal G"
 * and its stderr tail indented.  Exit 0 when every save exited 0, 1 when
 * one did not, 2 when nsrexecd refused (its message on stderr), 3 when
 * the run did not end within 120 s.  Env: EXECD_PSS, EXECD_PAR.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/execd_clnt.h"

/* main - run, poll every 200 ms, print. */
int main(int argc, char **argv)
{
	struct nsr_execd_save a;
	struct nsr_execd_status st;
	struct nsr_execd *h;
	struct nsr_buf err;
	uint64_t run;
	int bad = 0, rc;

	if (argc < 6) {
		fprintf(stderr, "usage: execd_testclnt HOST SERVER CLIENT "
			"LEVEL SAVESET...\n");
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.server = argv[2];
	a.client = argv[3];
	/* save -g of a group that must exist: none unless EXECD_GROUP */
	a.group = getenv("EXECD_GROUP") ? getenv("EXECD_GROUP") : "";
	a.level = argv[4];
	a.savesets = (const char *const *)argv + 5;
	a.nsavesets = (size_t)(argc - 5);
	a.pss = getenv("EXECD_PSS");
	a.parallelism = getenv("EXECD_PAR") ? atoi(getenv("EXECD_PAR")) : 0;
	nsr_buf_init(&err, 0);
	if (nsr_execd_new(argv[1], 0, &h) != NSR_OK)
		return 2;
	rc = nsr_execd_run_save(h, &a, &run, &err);
	if (rc != NSR_OK) {
		fprintf(stderr, "%s\n", err.data);
		nsr_buf_release(&err);
		nsr_execd_close(h);
		return 2;
	}
	printf("run %llu\n", (unsigned long long)run);
	for (int i = 0; i < 600; i++) {
		rc = nsr_execd_poll(h, run, &st, &err);
		if (rc != NSR_OK) {
			fprintf(stderr, "%s\n", err.data);
			nsr_execd_close(h);
			return 2;
		}
		if (st.done)
			break;
		nsr_execd_status_free(&st);
		usleep(200000);
	}
	if (!st.done) {
		nsr_buf_release(&err);
		nsr_execd_close(h);
		return 3;
	}
	for (size_t i = 0; i < st.n; i++) {
		char *save = NULL;

		printf("%s state %d exit %d signal %d\n", st.sets[i].name,
		       st.sets[i].state, st.sets[i].exit_code,
		       st.sets[i].signal);

		for (char *l = strtok_r(st.sets[i].tail, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save))
			printf("  %s\n", l);
		bad += st.sets[i].state != NSR_EXECD_ENDED ||
		       st.sets[i].exit_code != 0;
	}
	nsr_execd_status_free(&st);
	nsr_execd_close(h);
	nsr_buf_release(&err);
	return bad ? 1 : 0;
}
