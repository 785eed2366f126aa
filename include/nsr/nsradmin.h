/*
 * nsradmin.h - the nsradmin command interpreter, independent of where the
 * resources live.
 *
 * The nsradmin tool plugs in a backend (an ops table: an RPC client of
 * nsrd, or a local resdb for "-d resdir" offline mode), an output callback
 * and, when the input is a terminal, a confirmation callback; then it
 * feeds input lines.  The interpreter knows the commands of NetWorker's
 * nsradmin (any unique prefix works; "p" = print):
 *
 *	. [query]		set the current query (or show it)
 *	print [query]		print matching resources (query becomes current)
 *	show [attr; ...]	print only these attributes ("show" = all)
 *	create attrlist		create a resource ("Create?")
 *	update attrlist		set attributes on every resource of the current
 *				query ("Update?")
 *	append attrlist		add values to attributes of those resources
 *	delete [query]		delete matching resources ("Delete?" for each)
 *	types			list the resource types
 *	option [opt ...]	Dynamic, Hidden, Resource ID (display options);
 *	unset opt ...		  "option" alone lists them
 *	help, ?			command summary
 *	quit			leave
 *
 * A line ending in ',' or ';' continues on the next line; '#' lines are
 * comments.  Messages follow NetWorker's wording where it is known
 * ("Current query set", "No resources found for query:", "created resource
 * id X", "updated resource id X", "deleted resource id X").  Errors name
 * the problem and its position ("line 1, column 14: expected a value").
 *
 * Ownership: the interpreter copies the opts; ops/ctx/arg pointers must
 * stay valid while it lives.  It prints only through opts.write.
 */
#ifndef NSR_NSRADMIN_H
#define NSR_NSRADMIN_H

#include <stddef.h>

struct nsr_buf;
struct nsr_res;
struct nsr_res_list;
struct nsr_res_schema;
struct nsradmin;

/* The resource store.  Each call returns NSR_OK or a negative nsr_err and,
 * on failure, may append a one-line reason to why (shown to the user). */
struct nsradmin_ops {
	/* list - append copies of the resources matching query (NULL = all),
	 * complete with hidden attributes and the id, to out. */
	int (*list)(void *ctx, const struct nsr_res *query,
		    struct nsr_res_list *out, struct nsr_buf *why);
	/* create - store a new resource; *id_out (malloc'ed) gets its id. */
	int (*create)(void *ctx, const struct nsr_res *r, char **id_out,
		      struct nsr_buf *why);
	/* update - replace the whole resource with this id by r. */
	int (*update)(void *ctx, const char *id, const struct nsr_res *r,
		      struct nsr_buf *why);
	/* remove - delete the resource with this id. */
	int (*remove)(void *ctx, const char *id, struct nsr_buf *why);
	/* schema - the types known to the store (may be NULL, or return
	 * NULL: then types come from the stored resources). */
	const struct nsr_res_schema *(*schema)(void *ctx);
};

/* nsradmin_resdb_ops - a backend over a local resource database, for
 * nsradmin -d resdir: ctx is the struct nsr_resdb * (resdb.h). */
const struct nsradmin_ops *nsradmin_resdb_ops(void);

/* Output streams for opts.write. */
enum nsradmin_stream { NSRADMIN_OUT = 1, NSRADMIN_ERR = 2 };

struct nsradmin_opts {
	const struct nsradmin_ops *ops;
	void *ctx;
	/* write - print len bytes of text on a stream (required). */
	void (*write)(void *arg, enum nsradmin_stream s, const char *text,
		      size_t len);
	/* confirm - ask prompt ("Update?") and return 1 for yes; NULL means
	 * yes without asking (input is not a terminal, or -y). */
	int (*confirm)(void *arg, const char *prompt);
	void *arg;		/* passed to write and confirm */
};

/* Results of nsradmin_feed besides NSR_OK and negative errors. */
#define NSRADMIN_QUIT 1		/* "quit" was given */
#define NSRADMIN_MORE 2		/* the line continues; feed the next one */

/* nsradmin_new - an interpreter with no current query, all attributes
 * shown and no display options.  NSR_OK, NSR_ERR_INVAL (ops or write
 * missing), NSR_ERR_NOMEM. */
int nsradmin_new(const struct nsradmin_opts *opts, struct nsradmin **out);
/* nsradmin_free - free the interpreter (NULL ok). */
void nsradmin_free(struct nsradmin *a);

/* nsradmin_feed - one input line (without its newline).  Returns NSR_OK
 * when the command ran, NSRADMIN_MORE when the line continues,
 * NSRADMIN_QUIT, or a negative nsr_err when the command failed (the
 * reason was already written to NSRADMIN_ERR; carry on with the next
 * line or stop, as the caller prefers). */
int nsradmin_feed(struct nsradmin *a, const char *line);
/* nsradmin_exec - one complete command (continuations already joined). */
int nsradmin_exec(struct nsradmin *a, const char *cmd);
/* nsradmin_set_query - set the current query from attribute-list text
 * (nsradmin's command-line query).  NSR_OK or NSR_ERR_SYNTAX (message
 * written). */
int nsradmin_set_query(struct nsradmin *a, const char *text);
/* nsradmin_pending - 1 if a continued command is waiting for more lines
 * (the caller may then report an unfinished command at end of input). */
int nsradmin_pending(const struct nsradmin *a);

/* nsradmin_prompt - the prompt to show on a terminal ("nsradmin> "). */
const char *nsradmin_prompt(const struct nsradmin *a);

#endif /* NSR_NSRADMIN_H */
