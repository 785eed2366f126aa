/*
 * sched.c - nsrd's scheduler: groups start at their start time when
 * autostart is on (on nsr_clock_now(), so tests advance a test clock),
 * or now through SAVEGRP (savegrp).  A group run has a task per NSR
 * client resource of the group: the client's nsrexecd runs save for its
 * save sets (src/clnt/execd) at the level of the day - the savegrp -l
 * level, else the group's level, else the group's schedule, else the
 * client's schedule; a schedule's skip leaves the client out.  The
 * client's save reaches the server by the client's "server network
 * interface" when it has one, else by nsrd's host name.  A client with
 * "parallel save streams per save set: Yes" runs save --parallelism=N,
 * N its parallelism.  Starts are
 * staggered (NSR_SCHED_STAGGER_MS, default 200 ms, between any two client
 * starts), at most the server's parallelism (or the group's savegrp
 * parallelism when lower) clients of a run are under way at once, and a
 * client that fails is tried again (after NSR_SCHED_RETRY_SEC, default
 * 10 s) up to the group's client retries, with only its failed save sets.
 * The run is a savegrp job in nsrjobd with a save job per client task
 * (parent and children) and log lines; the parent ends failed when any
 * client failed after its retries.  savegrp -R plans, from those jobs,
 * only the clients the group's last run did not save, each at the level
 * it ran at (redo_find, redo_plan).
 *
 * One thread runs the scheduler.  It takes the RPC server mutex to read
 * resources and to write jobs (nsrd's jobd handle is used under it), and
 * talks to clients without it, so a client that does not answer never
 * stalls nsrd.
 *
 * Invariants:
 *   1. a run slot is in use exactly when used is 1; the SAVEGRP handler
 *      (under the RPC mutex) fills a free slot and sets used under
 *      g_sched.lock, the thread alone works on a used slot and frees it
 *      under g_sched.lock; the thread never holds g_sched.lock while it
 *      waits for the RPC mutex;
 *   2. at most one run per group at a time;
 *   3. a task is WAIT (to start at next_ms), RUNNING (run id on its
 *      client, polled at poll_ms), or finished (OK, FAILED, SKIPPED);
 *      tries counts its starts, never more than client retries + 1;
 *   4. a run ends when all its tasks are finished; its parent job then
 *      gets its final state.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/execd_clnt.h"
#include "nsr/host.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/level.h"
#include "nsr/log.h"
#include "nsr/pssspec.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/sched.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

#define SCHED_MAX_RUNS 16
#define SCHED_MAX_TASKS SAVEGRP_CLIENTS_MAX
#define SCHED_POLL_MS 1000
#define SCHED_STEP_MS 100
#define SCHED_EXECD_TIMEOUT_MS 15000
#define SAVE_EXIT_SKIPPED 3 /* save: complete, some files not whole */

enum { T_WAIT, T_RUNNING, T_OK, T_FAILED, T_SKIPPED };

struct task {
	char client[NSR_HOST_MAX + 1];
	char server[NSR_HOST_MAX + 1];	/* as the client names the server */
	int pss;			/* save --parallelism (PSS); 0 = no */
	char pss_spec[NSR_SHORT_MAX];	/* save --pss=SPEC with pss */
	char level[16];
	char *sets[EXEC_SAVESETS_MAX];
	size_t nsets;
	int state;
	int tries;
	int64_t next_ms, poll_ms;
	uint64_t run;
	struct nsr_execd *h;
	int64_t jobid;
	char why[512];
};

struct grun {
	int used;
	char group[NSR_SHORT_MAX];
	int64_t jobid;
	int retries;
	unsigned max_running;
	size_t n;
	struct task *t;
};

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	int started;
	volatile int stop;
	struct grun runs[SCHED_MAX_RUNS];
	time_t last_check;	/* autostart: starts after this were seen */
	int64_t next_start_ms;	/* staggering: no client start before */
	int stagger_ms, retry_ms;
} g_sched = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* now_ms - monotonic milliseconds. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* env_ms - a non-negative number from the environment, or dflt. */
static int env_ms(const char *name, int dflt, int scale)
{
	const char *v = getenv(name);

	return v && *v && atoi(v) >= 0 ? atoi(v) * scale : dflt;
}

/* in_list - is name one of attribute attr's values of r (no case)? */
static int in_list(const struct nsr_res *r, const char *attr,
		   const char *name)
{
	long i = nsr_res_find(r, attr);

	for (size_t j = 0; i >= 0 && j < nsr_res_attr_nvalues(r, (size_t)i);
	     j++)
		if (strcasecmp(nsr_res_attr_value(r, (size_t)i, j), name) == 0)
			return 1;
	return 0;
}

/* pss_spec - client c's PSS:streams_per_ss from its save operations
 * into spec, or the default count when it names none. */
static void pss_spec(const struct nsr_res *c, char *spec, size_t size)
{
	long i = nsr_res_find(c, "save operations");
	size_t n = i >= 0 ? nsr_res_attr_nvalues(c, (size_t)i) : 0;
	const char *ops[64];
	struct nsr_buf b;

	for (size_t j = 0; j < n && j < NSR_ARRAY_SIZE(ops); j++)
		ops[j] = nsr_res_attr_value(c, (size_t)i, j);
	nsr_buf_init(&b, size - 1);
	if (nsr_pssspec_from_ops(ops, n < 64 ? n : 64, &b) == 1 && b.len)
		snprintf(spec, size, "%s", b.data);
	else
		snprintf(spec, size, "%d", NSR_PSS_STREAMS_DEFAULT);
	nsr_buf_release(&b);
}

/* free_tasks - a run's tasks and their save set names. */
static void free_tasks(struct grun *r)
{
	for (size_t i = 0; i < r->n; i++) {
		for (size_t j = 0; j < r->t[i].nsets; j++)
			free(r->t[i].sets[j]);
		nsr_execd_close(r->t[i].h);
	}
	free(r->t);
	r->t = NULL;
	r->n = 0;
}

/* day_level - the level of client resource c in group g today; its name
 * into out, or -1 with why. */
static int day_level(struct nsrd *n, const struct nsr_res *g,
		     const struct nsr_res *c, const char *want, char *out,
		     size_t len, struct nsr_buf *why)
{
	const char *lv = want && *want ? want : nsr_res_get(g, "level");
	const char *sname = nsr_res_get(g, "schedule");
	const struct nsr_res *s;
	struct nsr_sched *sch;
	long oi;
	size_t no;
	const char **ov;
	int l, rc;

	if (lv && *lv) {
		snprintf(out, len, "%s", lv);
		return 0;
	}
	if (!sname || !*sname)
		sname = nsr_res_get(c, "schedule");
	if (!sname || !*sname)
		sname = "Default";
	s = nsrd_res_find1(n, "NSR schedule", sname);
	if (!s) {
		nsr_buf_addf(why, "schedule '%s' does not exist (nsradmin: "
			     "print type: NSR schedule)", sname);
		return -1;
	}
	oi = nsr_res_find(s, "override");
	no = oi >= 0 ? nsr_res_attr_nvalues(s, (size_t)oi) : 0;
	ov = nsr_xcalloc(no + 1, sizeof(*ov));
	for (size_t j = 0; j < no; j++)
		ov[j] = nsr_res_attr_value(s, (size_t)oi, j);
	sch = nsr_xmalloc(sizeof(*sch));
	rc = nsr_sched_parse(nsr_res_get(s, "period"),
			     nsr_res_get(s, "action"), ov, no, sch, why);
	l = rc == NSR_OK ? nsr_sched_level_at(sch, nsr_clock_now()) : -1;
	free(sch);
	free(ov);
	if (l < 0)
		return -1;
	snprintf(out, len, "%s", nsr_sched_level_name(l));
	return 0;
}

/* plan - the tasks of a run of group g into r (clients[0..nc): only
 * those; want: the level asked).  0, or -1 with why. */
static int plan(struct nsrd *n, const struct nsr_res *g, const char *want,
		char *const *clients, size_t nc, struct grun *r,
		struct nsr_buf *why)
{
	const char *gname = nsr_res_get(g, "name");
	size_t count = nsr_resdb_count(n->res);
	char *seen = nsr_xcalloc(nc + 1, 1);

	r->t = nsr_xcalloc(SCHED_MAX_TASKS, sizeof(*r->t));
	r->n = 0;
	for (size_t i = 0; i < count; i++) {
		const struct nsr_res *c = nsr_resdb_at(n->res, i);
		const char *cname = nsr_res_get(c, "name");
		const char *sb = nsr_res_get(c, "scheduled backup");
		long si = nsr_res_find(c, "save set");
		struct task *t;
		size_t k = nc;

		if (!nsr_res_name_eq(nsr_res_type(c), "NSR client") || !cname ||
		    !in_list(c, "group", gname))
			continue;
		for (size_t j = 0; j < nc; j++)
			if (strcasecmp(clients[j], cname) == 0)
				k = j;
		if (nc && k == nc)
			continue;
		if (nc)
			seen[k] = 1;
		if (sb && strcasecmp(sb, "Disabled") == 0 && !nc)
			continue;
		if (r->n == SCHED_MAX_TASKS) {
			nsr_buf_addf(why, "group %s has more than %d clients",
				     gname, SCHED_MAX_TASKS);
			goto fail;
		}
		t = &r->t[r->n++];
		snprintf(t->client, sizeof(t->client), "%s", cname);
		snprintf(t->server, sizeof(t->server), "%s",
			 nsr_res_get(c, "server network interface") &&
					 *nsr_res_get(c, "server network "
							 "interface")
				 ? nsr_res_get(c, "server network interface")
				 : n->server_name);
		if (day_level(n, g, c, want, t->level, sizeof(t->level),
			      why) != 0) {
			nsr_buf_addf(why, " (client %s)", cname);
			goto fail;
		}
		if (strcmp(t->level, "skip") == 0)
			t->state = T_SKIPPED;
		/* Parallel save streams use the client's parallelism. */
		if (in_list(c, "parallel save streams per save set", "Yes")) {
			t->pss = atoi(nsr_res_get(c, "parallelism")
					      ? nsr_res_get(c, "parallelism")
					      : "4");
			pss_spec(c, t->pss_spec, sizeof(t->pss_spec));
		}
		for (size_t j = 0; si >= 0 &&
				   j < nsr_res_attr_nvalues(c, (size_t)si) &&
				   t->nsets < EXEC_SAVESETS_MAX;
		     j++)
			t->sets[t->nsets++] = nsr_xstrdup(
				nsr_res_attr_value(c, (size_t)si, j));
		if (!t->nsets)
			t->sets[t->nsets++] = nsr_xstrdup("All");
	}
	for (size_t j = 0; j < nc; j++)
		if (!seen[j]) {
			nsr_buf_addf(why, "client %s is not in group %s (its "
				     "'group' attribute does not name it)",
				     clients[j], gname);
			goto fail;
		}
	free(seen);
	return 0;
fail:
	free(seen);
	free_tasks(r);
	return -1;
}

/* job_new - a job row; its id or 0 (logged). */
static int64_t job_new(struct nsrd *n, enum nsr_jobdb_type type,
		       int64_t parent, const char *client, const char *name,
		       const char *level, const char *group)
{
	struct nsr_jobdb_job j;
	struct nsr_buf err;
	int64_t id = 0;
	char host[NSR_HOST_MAX + 1];

	memset(&j, 0, sizeof(j));
	nsr_host_self(host, sizeof(host));
	j.parent_id = parent;
	j.type = type;
	j.client = client;
	j.name = name;
	j.level = level;
	j.group = group;
	j.host = host;
	j.state = NSR_JOBDB_QUEUED;
	j.start_time = nsr_clock_now();
	j.command = type == NSR_JOBDB_TYPE_SAVEGRP ? "savegrp" : "save";
	nsr_buf_init(&err, 0);
	if (nsr_jobd_create(n->jobd, &j, &id, &err) != NSR_OK) {
		nsr_warn("group %s: cannot record a job: %s", group, err.data);
		id = 0;
	}
	nsr_buf_release(&err);
	return id;
}

/* job_end - set a job's state and status; log a line (both may be 0 or
 * NULL).  Under the RPC mutex. */
static void job_end(struct nsrd *n, int64_t id, enum nsr_jobdb_state st,
		    const char *status, const char *line)
{
	if (!id)
		return;
	if (line)
		nsr_jobd_log(n->jobd, id, line, NULL);
	if (st)
		nsr_jobd_set_state(n->jobd, id, st, status, NULL);
}

/* run_add - record the run's jobs and give it to the thread; the slot
 * index or -1 (why). */
static int run_add(struct nsrd *n, const struct nsr_res *g, struct grun *r,
		   struct nsr_buf *why)
{
	const char *gname = nsr_res_get(g, "name");
	const char *ret = nsr_res_get(g, "client retries");
	const char *gp = nsr_res_get(g, "savegrp parallelism");
	long long sp = nsrd_server_attr_num(n, "parallelism", 32);
	int slot = -1;

	pthread_mutex_lock(&g_sched.lock);
	for (int i = 0; i < SCHED_MAX_RUNS; i++) {
		if (g_sched.runs[i].used &&
		    strcasecmp(g_sched.runs[i].group, gname) == 0) {
			pthread_mutex_unlock(&g_sched.lock);
			nsr_buf_addf(why, "group %s is running already (job "
				     "%lld); wait for it to end", gname,
				     (long long)g_sched.runs[i].jobid);
			return -1;
		}
		if (!g_sched.runs[i].used && slot < 0)
			slot = i;
	}
	pthread_mutex_unlock(&g_sched.lock);
	if (slot < 0) {
		nsr_buf_addf(why, "%d groups are running; start %s when one "
			     "has ended", SCHED_MAX_RUNS, gname);
		return -1;
	}
	snprintf(r->group, sizeof(r->group), "%s", gname);
	r->retries = ret ? atoi(ret) : 1;
	r->max_running = sp > 0 ? (unsigned)sp : 32;
	if (gp && atoi(gp) > 0 && (unsigned)atoi(gp) < r->max_running)
		r->max_running = (unsigned)atoi(gp);
	r->jobid = job_new(n, NSR_JOBDB_TYPE_SAVEGRP, 0, NULL, gname, NULL,
			   gname);
	if (r->jobid)
		nsr_jobd_set_state(n->jobd, r->jobid, NSR_JOBDB_ACTIVE, NULL,
				   NULL);
	for (size_t i = 0; i < r->n; i++) {
		struct task *t = &r->t[i];

		t->jobid = job_new(n, NSR_JOBDB_TYPE_SAVE, r->jobid, t->client,
				   t->sets[0], t->level, gname);
		if (t->state == T_SKIPPED)
			job_end(n, t->jobid, NSR_JOBDB_COMPLETED, "skipped",
				"the schedule says skip today");
	}
	nsr_info("group %s started: %zu client(s), job %lld", gname, r->n,
		 (long long)r->jobid);
	pthread_mutex_lock(&g_sched.lock);
	g_sched.runs[slot] = *r;
	g_sched.runs[slot].used = 1;
	pthread_mutex_unlock(&g_sched.lock);
	return slot;
}

/* start_group - plan and start group g now; 0 or -1 (why).  Under the
 * RPC mutex.  *jobid gets the parent job's id. */
static int start_group(struct nsrd *n, const struct nsr_res *g,
		       const char *level, char *const *clients, size_t nc,
		       int64_t *jobid, struct nsr_buf *why)
{
	struct grun r;
	int slot;

	memset(&r, 0, sizeof(r));
	if (plan(n, g, level, clients, nc, &r, why) != 0)
		return -1;
	slot = run_add(n, g, &r, why);
	if (slot < 0) {
		free_tasks(&r);
		return -1;
	}
	*jobid = r.jobid;
	return 0;
}

/* autostart - start the groups whose start time came since the last
 * check (test clock); "Start now" starts at once and becomes Enabled.
 * Under the RPC mutex. */
static void autostart(struct nsrd *n)
{
	time_t now = nsr_clock_now();
	size_t count = nsr_resdb_count(n->res);
	time_t last = g_sched.last_check;

	if (!last || now < last) { /* first check, or the clock went back */
		g_sched.last_check = now;
		return;
	}
	for (size_t i = 0; i < count; i++) {
		const struct nsr_res *g = nsr_resdb_at(n->res, i);
		const char *as = nsr_res_get(g, "autostart");
		const char *st = nsr_res_get(g, "start time");
		const char *iv = nsr_res_get(g, "interval");
		int start = 0, ival = 86400, now_start;
		struct nsr_buf why;
		int64_t job;

		if (!nsr_res_name_eq(nsr_res_type(g), "NSR group") || !as ||
		    strcasecmp(as, "Disabled") == 0)
			continue;
		now_start = strcasecmp(as, "Start now") == 0;
		if (!now_start &&
		    (nsr_sched_parse_start(st ? st : "3:33", &start, NULL) ||
		     nsr_sched_parse_interval(iv ? iv : "24:00", &ival, NULL) ||
		     nsr_sched_next_run(last, start, ival) > now))
			continue;
		nsr_buf_init(&why, 0);
		if (start_group(n, g, NULL, NULL, 0, &job, &why) != 0)
			nsr_warn("group %s did not start: %s",
				 nsr_res_get(g, "name"), why.data);
		nsr_buf_release(&why);
		if (now_start) {
			nsrd_res_set_attr(n, g, "autostart", "Enabled");
			count = nsr_resdb_count(n->res); /* g may have moved */
		}
	}
	g_sched.last_check = now;
}

/* task_fail - an attempt failed (why in t->why): again after the retry
 * delay while tries last, else FAILED. */
static void task_fail(struct nsrd *n, struct grun *r, struct task *t)
{
	char line[700];
	int again = t->tries <= r->retries;

	nsr_execd_close(t->h);
	t->h = NULL;
	snprintf(line, sizeof(line), "attempt %d of %d failed: %s%s",
		 t->tries, r->retries + 1, t->why,
		 again ? "; trying again" : "");
	nsr_warn("group %s, client %s: %s", r->group, t->client, line);
	t->state = again ? T_WAIT : T_FAILED;
	t->next_ms = now_ms() + g_sched.retry_ms;
	nsr_rpc_server_lock(n->d->srv);
	job_end(n, t->jobid, again ? 0 : NSR_JOBDB_FAILED, "failed", line);
	nsr_rpc_server_unlock(n->d->srv);
}

/* task_start - ask the client's nsrexecd to run save. */
static void task_start(struct nsrd *n, struct grun *r, struct task *t)
{
	struct nsr_execd_save a;
	struct nsr_buf err;
	int rc;

	t->tries++;
	memset(&a, 0, sizeof(a));
	a.server = t->server;
	a.client = t->client;
	a.group = r->group;
	a.level = t->level;
	a.savesets = (const char *const *)t->sets;
	a.nsavesets = t->nsets;
	a.parallelism = t->pss;
	a.pss = t->pss ? t->pss_spec : "";
	nsr_buf_init(&err, 0);
	rc = nsr_execd_new(t->client, 0, &t->h);
	if (rc == NSR_OK) {
		nsr_execd_set_timeout(t->h, SCHED_EXECD_TIMEOUT_MS);
		rc = nsr_execd_run_save(t->h, &a, &t->run, &err);
	}
	if (rc != NSR_OK) {
		snprintf(t->why, sizeof(t->why), "%s",
			 err.len ? err.data : nsr_strerror(rc));
		nsr_buf_release(&err);
		task_fail(n, r, t);
		return;
	}
	nsr_buf_release(&err);
	t->state = T_RUNNING;
	t->poll_ms = now_ms() + SCHED_POLL_MS / 2;
	nsr_info("group %s: client %s runs save at level %s (%zu save "
		 "set(s), attempt %d)", r->group, t->client, t->level,
		 t->nsets, t->tries);
	if (t->tries == 1) {
		nsr_rpc_server_lock(n->d->srv);
		nsr_jobd_set_state(n->jobd, t->jobid, NSR_JOBDB_ACTIVE, NULL,
				   NULL);
		nsr_rpc_server_unlock(n->d->srv);
	}
}

/* last_line - the last non-empty line of text into out. */
static void last_line(const char *text, char *out, size_t len)
{
	const char *end = text + strlen(text), *p;

	while (end > text && end[-1] == '\n')
		end--;
	p = end;
	while (p > text && p[-1] != '\n')
		p--;
	snprintf(out, len, "%.*s", (int)(end - p), p);
}

/* task_done - a run ended: OK, or the failed save sets tried again. */
static void task_done(struct nsrd *n, struct grun *r, struct task *t,
		      const struct nsr_execd_status *st)
{
	char *failed[EXEC_SAVESETS_MAX];
	size_t nf = 0;
	char last[300] = "";

	for (size_t i = 0; i < st->n && nf < EXEC_SAVESETS_MAX; i++) {
		const struct nsr_execd_set *s = &st->sets[i];

		if (s->state == NSR_EXECD_ENDED &&
		    (s->exit_code == 0 || s->exit_code == SAVE_EXIT_SKIPPED))
			continue;
		failed[nf++] = nsr_xstrdup(s->name);
		if (!*last) {
			last_line(s->tail, last, sizeof(last));
			snprintf(t->why, sizeof(t->why), "save of %s %s %d: %s",
				 s->name, s->signal ? "killed by signal"
						    : "exited",
				 s->signal ? s->signal : s->exit_code, last);
		}
	}
	if (!nf) {
		nsr_execd_close(t->h);
		t->h = NULL;
		t->state = T_OK;
		nsr_info("group %s: client %s succeeded", r->group, t->client);
		nsr_rpc_server_lock(n->d->srv);
		job_end(n, t->jobid, NSR_JOBDB_COMPLETED, "succeeded", NULL);
		nsr_rpc_server_unlock(n->d->srv);
		return;
	}
	for (size_t i = 0; i < t->nsets; i++)
		free(t->sets[i]);
	memcpy(t->sets, failed, nf * sizeof(*failed));
	t->nsets = nf;
	task_fail(n, r, t);
}

/* task_poll - how the client's saves are doing. */
static void task_poll(struct nsrd *n, struct grun *r, struct task *t)
{
	struct nsr_execd_status st;
	struct nsr_buf err;
	int rc;

	nsr_buf_init(&err, 0);
	rc = nsr_execd_poll(t->h, t->run, &st, &err);
	t->poll_ms = now_ms() + SCHED_POLL_MS;
	if (rc != NSR_OK) {
		snprintf(t->why, sizeof(t->why), "lost the client's run: %s",
			 err.data ? err.data : nsr_strerror(rc));
		task_fail(n, r, t);
	} else if (st.done) {
		task_done(n, r, t, &st);
	}
	nsr_execd_status_free(&st);
	nsr_buf_release(&err);
}

/* run_end - all tasks finished: the parent job's state; free the slot. */
static void run_end(struct nsrd *n, struct grun *r)
{
	struct nsr_buf failed;
	size_t nf = 0, nok = 0;
	char status[600];

	nsr_buf_init(&failed, 0);
	for (size_t i = 0; i < r->n; i++) {
		if (r->t[i].state == T_FAILED)
			nsr_buf_addf(&failed, "%s%s", nf++ ? ", " : "",
				     r->t[i].client);
		nok += r->t[i].state == T_OK;
	}
	if (nf)
		snprintf(status, sizeof(status), "failed: %zu of %zu "
			 "client(s): %.500s", nf, r->n, failed.data);
	else
		snprintf(status, sizeof(status), "succeeded: %zu client(s), "
			 "%zu skipped", nok, r->n - nok);
	nsr_info("group %s ended: %s", r->group, status);
	nsr_rpc_server_lock(n->d->srv);
	job_end(n, r->jobid, nf ? NSR_JOBDB_FAILED : NSR_JOBDB_COMPLETED,
		nf ? "failed" : "succeeded", status);
	nsr_rpc_server_unlock(n->d->srv);
	nsrd_bootstrap_after_group(n, r->group);
	nsr_buf_release(&failed);
	free_tasks(r);
	pthread_mutex_lock(&g_sched.lock);
	r->used = 0;
	pthread_mutex_unlock(&g_sched.lock);
}

/* step_run - start, poll and retry the tasks of run r. */
static void step_run(struct nsrd *n, struct grun *r)
{
	unsigned running = 0;
	int open = 0;

	for (size_t i = 0; i < r->n; i++)
		running += r->t[i].state == T_RUNNING;
	for (size_t i = 0; i < r->n && !g_sched.stop; i++) {
		struct task *t = &r->t[i];
		int64_t now = now_ms();

		if (t->state == T_RUNNING && now >= t->poll_ms) {
			task_poll(n, r, t);
			running -= t->state != T_RUNNING;
		} else if (t->state == T_WAIT && now >= t->next_ms &&
			   now >= g_sched.next_start_ms &&
			   running < r->max_running) {
			g_sched.next_start_ms = now + g_sched.stagger_ms;
			task_start(n, r, t);
			running += t->state == T_RUNNING;
		}
		open += t->state == T_WAIT || t->state == T_RUNNING;
	}
	if (!open && !g_sched.stop)
		run_end(n, r);
}

/* sched_main - the scheduler thread. */
static void *sched_main(void *arg)
{
	struct nsrd *n = arg;
	struct timespec nap = {0, SCHED_STEP_MS * 1000000L};
	int64_t next_auto = 0;

	while (!g_sched.stop) {
		if (now_ms() >= next_auto) {
			nsr_rpc_server_lock(n->d->srv);
			autostart(n);
			nsr_rpc_server_unlock(n->d->srv);
			next_auto = now_ms() + 1000;
		}
		for (int i = 0; i < SCHED_MAX_RUNS && !g_sched.stop; i++) {
			int used;

			pthread_mutex_lock(&g_sched.lock);
			used = g_sched.runs[i].used;
			pthread_mutex_unlock(&g_sched.lock);
			if (used)
				step_run(n, &g_sched.runs[i]);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* nsrd_sched_start - start the scheduler thread. */
int nsrd_sched_start(struct nsrd *n)
{
	g_sched.stagger_ms = env_ms("NSR_SCHED_STAGGER_MS", 200, 1);
	g_sched.retry_ms = env_ms("NSR_SCHED_RETRY_SEC", 10000, 1000);
	g_sched.stop = 0;
	if (pthread_create(&g_sched.thread, NULL, sched_main, n) != 0) {
		nsr_error("cannot start the scheduler thread: %s",
			  strerror(errno));
		return -1;
	}
	g_sched.started = 1;
	return 0;
}

/* nsrd_sched_stop - stop the thread; runs under way are dropped (their
 * saves on the clients go on, settled by their sessions' leases; their
 * jobs end failed, "interrupted: server restarted", when nsrjobd, which
 * stops with nsrd, next starts: 463-savegrp-nsrd-killed). */
void nsrd_sched_stop(struct nsrd *n)
{
	NSR_UNUSED(n);
	if (!g_sched.started)
		return;
	g_sched.stop = 1;
	pthread_join(g_sched.thread, NULL);
	g_sched.started = 0;
	for (int i = 0; i < SCHED_MAX_RUNS; i++)
		if (g_sched.runs[i].used) {
			free_tasks(&g_sched.runs[i]);
			g_sched.runs[i].used = 0;
		}
}

/* preview - the plan of r as SAVEGRP's answer. */
static void preview(const struct grun *r, savegrp_res *res)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		k += r->t[i].nsets;
	if (k > SAVEGRP_PLAN_MAX) {
		nsr_status_set(&res->st, NSR_ERR_LIMIT, "the group would run "
			       "%zu save sets; a preview lists at most %d",
			       k, SAVEGRP_PLAN_MAX);
		return;
	}
	res->plan.plan_val = nsr_xcalloc(k + 1, sizeof(savegrp_item));
	res->plan.plan_len = (u_int)k;
	k = 0;
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = 0; j < r->t[i].nsets; j++, k++) {
			savegrp_item *it = &res->plan.plan_val[k];

			it->client = nsr_xstrdup(r->t[i].client);
			it->saveset = nsr_xstrdup(r->t[i].sets[j]);
			it->level = nsr_xstrdup(r->t[i].level);
		}
	nsr_status_ok(&res->st);
}

/* savegrp -O runs: the bootstrap's pid and the run's job, until the
 * main loop reaps the bootstrap (nsrd_bootstrap_exited). */
#define BOOT_RUNS_MAX 8
static struct {
	pid_t pid;
	int64_t jobid;
	char group[NSR_SHORT_MAX];
} g_boot_runs[BOOT_RUNS_MAX];
static pthread_mutex_t g_boot_mu = PTHREAD_MUTEX_INITIALIZER;

/* bootstrap_run - savegrp -O of group g: a savegrp job whose end is the
 * bootstrap's.  Under the RPC mutex; 0 or -1 (why). */
static int bootstrap_run(struct nsrd *n, const struct nsr_res *g,
			 int64_t *jobid, struct nsr_buf *why)
{
	const char *gname = nsr_res_get(g, "name");
	int slot = -1;
	pid_t pid;

	pthread_mutex_lock(&g_boot_mu);
	for (int i = 0; i < BOOT_RUNS_MAX && slot < 0; i++)
		if (!g_boot_runs[i].pid)
			slot = i;
	if (slot >= 0)
		g_boot_runs[slot].pid = -1; /* taken while it starts */
	pthread_mutex_unlock(&g_boot_mu);
	if (slot < 0) {
		nsr_buf_addf(why, "%d bootstrap runs (savegrp -O) are under "
			     "way already; try again when one ended",
			     BOOT_RUNS_MAX);
		return -1;
	}
	*jobid = job_new(n, NSR_JOBDB_TYPE_SAVEGRP, 0, n->server_name,
			 gname, "full", gname);
	job_end(n, *jobid, NSR_JOBDB_ACTIVE, "bootstrap only (savegrp -O)",
		"savegrp -O: the bootstrap only (client file indexes "
		"included), no client save");
	/* Started and recorded under the lock: the main loop that reaps it
	 * (nsrd_bootstrap_exited) finds it however soon it ends. */
	pthread_mutex_lock(&g_boot_mu);
	pid = nsrd_bootstrap_start(n, gname);
	g_boot_runs[slot].pid = pid;
	g_boot_runs[slot].jobid = *jobid;
	snprintf(g_boot_runs[slot].group, sizeof(g_boot_runs[slot].group),
		 "%s", gname);
	pthread_mutex_unlock(&g_boot_mu);
	if (pid > 0)
		return 0;
	job_end(n, *jobid, NSR_JOBDB_FAILED, "failed",
		"nsrbootstrap could not be started: see daemon.log");
	pthread_mutex_lock(&g_boot_mu);
	g_boot_runs[slot].pid = 0;
	pthread_mutex_unlock(&g_boot_mu);
	return 0; /* the job says how it ended */
}

/* nsrd_bootstrap_exited - see nsrd.h. */
int nsrd_bootstrap_exited(struct nsrd *n, pid_t pid, int status)
{
	int64_t jobid = 0;
	char group[NSR_SHORT_MAX] = "", line[256];
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

	pthread_mutex_lock(&g_boot_mu);
	for (int i = 0; i < BOOT_RUNS_MAX && !jobid; i++)
		if (pid > 0 && g_boot_runs[i].pid == pid) {
			jobid = g_boot_runs[i].jobid;
			snprintf(group, sizeof(group), "%s",
				 g_boot_runs[i].group);
			g_boot_runs[i].pid = 0;
		}
	pthread_mutex_unlock(&g_boot_mu);
	if (!jobid)
		return 0;
	if (ok)
		snprintf(line, sizeof(line), "bootstrap saved (mminfo -B)");
	else if (WIFEXITED(status))
		snprintf(line, sizeof(line), "nsrbootstrap exited %d: see "
			 "daemon.log for why", WEXITSTATUS(status));
	else
		snprintf(line, sizeof(line), "nsrbootstrap was killed by "
			 "signal %d", WTERMSIG(status));
	nsr_info("group %s: savegrp -O ended: %s", group, line);
	nsr_rpc_server_lock(n->d->srv);
	job_end(n, jobid, ok ? NSR_JOBDB_COMPLETED : NSR_JOBDB_FAILED,
		ok ? "succeeded" : "failed", line);
	nsr_rpc_server_unlock(n->d->srv);
	return 1;
}

/* What savegrp -R runs again: clients of the restarted run, each with
 * the level it ran at. */
struct redo {
	int64_t of;		/* the restarted run's job */
	size_t n;
	char **client;
	char (*level)[16];
};

/* redo_free - what redo_find allocated. */
static void redo_free(struct redo *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->client[i]);
	free(d->client);
	free(d->level);
	memset(d, 0, sizeof(*d));
}

/* redo_find - the clients that group gname's last run (the newest savegrp
 * job of the group with client jobs under it: a savegrp -O run has none)
 * did not save: each whose job did not end completed, succeeded or
 * skipped.  Under the RPC mutex (nsrd's jobd handle).  0 (d->n may be 0:
 * note says why) or -1 (why). */
static int redo_find(struct nsrd *n, const char *gname, struct redo *d,
		     struct nsr_buf *note, struct nsr_buf *why)
{
	const struct nsr_jobdb_job *job;
	int64_t runs[64];
	enum nsr_jobdb_state rstate[64];
	size_t nr = 0;
	char q[64];
	struct nsr_buf err, gq;
	int rc;

	memset(d, 0, sizeof(*d));
	nsr_buf_init(&err, 0);
	nsr_buf_init(&gq, 0);
	rc = nsr_buf_addstr(&gq, ". type: savegrp job; group: ");
	if (rc == NSR_OK)
		rc = nsr_jobdb_query_quote(gname, &gq);
	if (rc == NSR_OK)
		rc = n->jobd ? nsr_jobd_query_open_text(n->jobd, gq.data, 0,
							&err)
			     : NSR_ERR_CONNECT;
	nsr_buf_release(&gq);
	/* the newest 64, in id order */
	while (rc == NSR_OK &&
	       (rc = nsr_jobd_query_next(n->jobd, &job, &err)) == NSR_OK) {
		if (nr == NSR_ARRAY_SIZE(runs)) {
			memmove(runs, runs + 1, sizeof(runs) - sizeof(*runs));
			memmove(rstate, rstate + 1,
				sizeof(rstate) - sizeof(*rstate));
			nr--;
		}
		runs[nr] = job->id;
		rstate[nr++] = job->state;
	}
	for (size_t k = nr; rc == NSR_ERR_EOF && k-- > 0 && !d->of;) {
		snprintf(q, sizeof(q), ". type: save job; parent job id: %lld",
			 (long long)runs[k]);
		rc = nsr_jobd_query_open_text(n->jobd, q, 0, &err);
		while (rc == NSR_OK &&
		       (rc = nsr_jobd_query_next(n->jobd, &job, &err)) ==
			       NSR_OK) {
			int saved = job->state == NSR_JOBDB_COMPLETED &&
				    job->status &&
				    (strcmp(job->status, "succeeded") == 0 ||
				     strcmp(job->status, "skipped") == 0);

			d->of = runs[k];
			if (rstate[k] == NSR_JOBDB_QUEUED ||
			    rstate[k] == NSR_JOBDB_ACTIVE) {
				nsr_buf_addf(why, "the last run of group %s "
					     "(job %lld) has not ended; "
					     "restart it once it has",
					     gname, (long long)runs[k]);
				rc = NSR_ERR_BUSY;
				break;
			}
			if (saved || !job->client || !*job->client)
				continue;
			if (d->n % 16 == 0) {
				d->client = nsr_xrealloc(
					d->client,
					(d->n + 16) * sizeof(*d->client));
				d->level = nsr_xrealloc(
					d->level,
					(d->n + 16) * sizeof(*d->level));
			}
			d->client[d->n] = nsr_xstrdup(job->client);
			snprintf(d->level[d->n], sizeof(d->level[d->n]), "%s",
				 job->level && *job->level ? job->level
							   : "");
			d->n++;
		}
	}
	if (rc == NSR_ERR_BUSY) {
		nsr_buf_release(&err);
		redo_free(d);
		return -1;
	}
	if (rc != NSR_ERR_EOF) {
		nsr_buf_addf(why, "cannot read the runs of group %s from the "
			     "jobs database: %s", gname,
			     err.len ? err.data : nsr_strerror(rc));
		nsr_buf_release(&err);
		redo_free(d);
		return -1;
	}
	nsr_buf_release(&err);
	if (!d->of)
		nsr_buf_addf(note, "group %s has no run to restart in the "
			     "jobs database", gname);
	else if (!d->n)
		nsr_buf_addf(note, "the last run of group %s (job %lld) saved "
			     "every client: nothing to restart", gname,
			     (long long)d->of);
	return 0;
}

/* redo_plan - the plan of savegrp -R: the clients of d (only those of
 * want, when given) that are still in group g, each at the level it ran
 * at; a client no longer in the group is named in note.  0 or -1 (why). */
static int redo_plan(struct nsrd *n, const struct nsr_res *g,
		     const struct redo *d, char *const *want, size_t nw,
		     struct grun *r, struct nsr_buf *note, struct nsr_buf *why)
{
	const char *gname = nsr_res_get(g, "name");
	char **pick = nsr_xcalloc(d->n + 1, sizeof(*pick));
	size_t np = 0;
	int rc;

	for (size_t i = 0; i < d->n; i++) {
		const struct nsr_res *c =
			nsrd_res_find1(n, "NSR client", d->client[i]);
		int wanted = !nw;

		for (size_t j = 0; j < nw; j++)
			wanted |= strcasecmp(want[j], d->client[i]) == 0;
		if (!wanted)
			continue;
		if (!c || !in_list(c, "group", gname)) {
			nsr_buf_addf(note, "%sclient %s is no longer in group "
				     "%s: not restarted", note->len ? "; " : "",
				     d->client[i], gname);
			continue;
		}
		pick[np++] = d->client[i];
	}
	if (!np) {
		free(pick);
		memset(r, 0, sizeof(*r));
		if (!note->len)
			nsr_buf_addf(note, "none of the clients named was left "
				     "unsaved by the last run of group %s (job "
				     "%lld)", gname, (long long)d->of);
		return 0;
	}
	rc = plan(n, g, "", pick, np, r, why);
	free(pick);
	if (rc != 0)
		return -1;
	/* each at the level it ran at (one that does not parse: today's) */
	for (size_t i = 0; i < d->n; i++) {
		int lv = nsr_sched_level_parse(d->level[i]);

		for (size_t t = 0; t < r->n && lv >= 0 && lv != NSR_SCHED_SKIP;
		     t++)
			if (strcasecmp(r->t[t].client, d->client[i]) == 0) {
				snprintf(r->t[t].level, sizeof(r->t[t].level),
					 "%s", d->level[i]);
				r->t[t].state = T_WAIT;
			}
	}
	return 0;
}

/* restart_group - savegrp -R: run again (or preview) what group g's last
 * run did not save.  Under the RPC mutex; answers in res. */
static void restart_group(struct nsrd *n, const struct nsr_res *g,
			  const savegrp_args *a, savegrp_res *res,
			  struct nsr_buf *why)
{
	struct redo d;
	struct grun run;
	struct nsr_buf note;

	nsr_buf_init(&note, 0);
	memset(&run, 0, sizeof(run));
	if (redo_find(n, nsr_res_get(g, "name"), &d, &note, why) != 0)
		goto out;
	res->restart_of = d.of;
	if (d.n && redo_plan(n, g, &d, a->clients.clients_val,
			     a->clients.clients_len, &run, &note, why) != 0)
		goto out;
	if (!run.n) {
		nsr_status_ok(&res->st);
	} else if (a->preview) {
		preview(&run, res);
	} else {
		if (run_add(n, g, &run, why) < 0)
			goto out;
		res->jobid = run.jobid;
		memset(&run, 0, sizeof(run)); /* the thread's now */
		if (res->jobid)
			nsr_jobd_logf(n->jobd, res->jobid, NULL,
				      "savegrp -R: a restart of job %lld",
				      (long long)d.of);
		nsr_status_ok(&res->st);
	}
	if (note.len) {
		free(res->note);
		res->note = nsr_rpc_str(note.data);
		nsr_info("group %s: savegrp -R: %s", nsr_res_get(g, "name"),
			 note.data);
	}
out:
	free_tasks(&run);
	redo_free(&d);
	nsr_buf_release(&note);
}

/* nsrd_savegrp - SAVEGRP: run a group now, or preview it. */
int nsrd_savegrp(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	savegrp_args *a = args;
	savegrp_res *r = res;
	const struct nsr_res *g;
	struct nsr_buf why;
	struct grun run;
	int lv = *a->level ? nsr_sched_level_parse(a->level) : 0;

	NSR_UNUSED(call);
	r->note = nsr_rpc_str("");
	if (lv < 0 || lv == NSR_SCHED_SKIP) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "level '%.32s': full, "
			       "incr or 1 to 9", a->level);
		return NSR_OK;
	}
	g = *a->group ? nsrd_res_find1(n, "NSR group", a->group) : NULL;
	if (!g) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "no group '%.64s' "
			       "(nsradmin: print type: NSR group)", a->group);
		return NSR_OK;
	}
	nsr_buf_init(&why, 0);
	memset(&run, 0, sizeof(run));
	if (a->restart && (a->only_bootstrap || *a->level)) {
		nsr_buf_addf(&why, "savegrp -R runs each client at the level "
			     "it ran at, and client saves only: not with -l "
			     "or -O");
	} else if (a->restart) {
		restart_group(n, g, a, r, &why);
	} else if (a->only_bootstrap && a->preview) {
		r->plan.plan_len = 0; /* nothing of the clients' */
		nsr_status_ok(&r->st);
	} else if (a->only_bootstrap) {
		if (bootstrap_run(n, g, &r->jobid, &why) == 0)
			nsr_status_ok(&r->st);
	} else if (a->preview) {
		if (plan(n, g, a->level, a->clients.clients_val,
			 a->clients.clients_len, &run, &why) == 0) {
			preview(&run, r);
			free_tasks(&run);
		}
	} else if (start_group(n, g, a->level, a->clients.clients_val,
			       a->clients.clients_len, &r->jobid,
			       &why) == 0) {
		nsr_status_ok(&r->st);
	}
	if (why.len)
		nsr_status_set(&r->st, NSR_ERR_INVAL, "%s", why.data);
	nsr_buf_release(&why);
	return NSR_OK;
}
