/*
 * mmdb.c - the media database schema: open/close, transactions, the
 * string table, volumes, save sets, fragments and clone instances, kept
 * in named B+trees with their indexes updated in the same transaction.
 * It owns struct mmdb and struct mmdb_txn; query.c reads through the
 * helpers exported in mmdb_int.h, check.c verifies what this file writes.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"

#include "mmdb_int.h"

const char *const mmdb_tree_names[T_COUNT] = {
	[T_SS] = "ss", [T_SS_CNT] = "ss_cnt", [T_SS_TIME] = "ss_time",
	[T_VOL] = "vol", [T_VOL_ID] = "vol_id", [T_VOL_NO] = "vol_no",
	[T_VOL_POOL] = "vol_pool", [T_FRAG_VOL] = "frag_vol", [T_STR] = "str",
};

/* ---- string table ---------------------------------------------------- */

/* str_hash - FNV-1a. */
static uint32_t str_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* strtab_hfind - hash slot of string s (holding its id or 0) (locked). */
static uint32_t *strtab_hfind(struct strtab *t, const char *s, size_t n)
{
	uint32_t mask = t->hcap - 1;
	uint32_t i = str_hash(s, n) & mask;

	while (t->hash[i]) {
		uint32_t id = t->hash[i];

		if (t->len[id] == n && memcmp(t->str[id], s, n) == 0)
			break;
		i = (i + 1) & mask;
	}
	return &t->hash[i];
}

/* strtab_rehash - rebuild the hash for ids 1..n-1 (write locked). */
static int strtab_rehash(struct strtab *t, uint32_t hcap)
{
	uint32_t *h = calloc(hcap, sizeof(*h));

	if (!h)
		return NSR_ERR_NOMEM;
	free(t->hash);
	t->hash = h;
	t->hcap = hcap;
	for (uint32_t id = 1; id < t->n; id++)
		*strtab_hfind(t, t->str[id], t->len[id]) = id;
	return NSR_OK;
}

/* strtab_add - append string with the next id (write locked). */
static int strtab_add(struct strtab *t, const char *s, size_t n,
		      uint32_t *id)
{
	int rc;

	if (t->n >= t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 256;
		char **ns = realloc(t->str, nc * sizeof(*ns));
		uint32_t *nl;

		if (!ns)
			return NSR_ERR_NOMEM;
		t->str = ns;
		nl = realloc(t->len, nc * sizeof(*nl));
		if (!nl)
			return NSR_ERR_NOMEM;
		t->len = nl;
		t->cap = nc;
	}
	if ((t->n + 1) * 2 > t->hcap) {
		rc = strtab_rehash(t, t->hcap ? t->hcap * 2 : 512);
		if (rc != NSR_OK)
			return rc;
	}
	t->str[t->n] = strndup(s, n);
	if (!t->str[t->n])
		return NSR_ERR_NOMEM;
	t->len[t->n] = (uint32_t)n;
	*id = t->n++;
	*strtab_hfind(t, s, n) = *id;
	return NSR_OK;
}

/* strtab_truncate - forget ids >= n (an aborted transaction's). */
static void strtab_truncate(struct strtab *t, uint32_t n)
{
	if (n >= t->n)
		return;
	pthread_rwlock_wrlock(&t->lock);
	while (t->n > n)
		free(t->str[--t->n]);
	(void)strtab_rehash(t, t->hcap);
	pthread_rwlock_unlock(&t->lock);
}

/* strtab_release - free the table. */
static void strtab_release(struct strtab *t)
{
	for (uint32_t i = 1; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->hash);
	pthread_rwlock_destroy(&t->lock);
}

/* mmdb_str_get - string of id into out; "" for 0. */
int mmdb_str_get(struct mmdb *db, uint32_t id, char *out, size_t cap)
{
	struct strtab *t = &db->strs;
	int rc = NSR_OK;

	out[0] = '\0';
	if (id == 0)
		return NSR_OK;
	pthread_rwlock_rdlock(&t->lock);
	if (id >= t->n)
		rc = NSR_ERR_CORRUPT;
	else if (t->len[id] >= cap)
		rc = NSR_ERR_CORRUPT;
	else
		memcpy(out, t->str[id], t->len[id] + 1);
	pthread_rwlock_unlock(&t->lock);
	return rc;
}

/* mmdb_str_find - id of an existing string (NSR_ERR_NOTFOUND if none). */
int mmdb_str_find(struct mmdb *db, const char *s, uint32_t *id)
{
	struct strtab *t = &db->strs;
	size_t n = strlen(s);

	*id = 0;
	if (n == 0)
		return NSR_OK;
	pthread_rwlock_rdlock(&t->lock);
	if (t->hcap)
		*id = *strtab_hfind(t, s, n);
	pthread_rwlock_unlock(&t->lock);
	return *id ? NSR_OK : NSR_ERR_NOTFOUND;
}

/* intern - id of s, adding it (in txn) if new. */
static int intern(struct mmdb_txn *txn, const char *s, uint32_t *id)
{
	struct mmdb *db = txn->db;
	uint8_t key[4];
	size_t n = strlen(s);
	int rc;

	rc = mmdb_str_find(db, s, id);
	if (rc != NSR_ERR_NOTFOUND)
		return rc;
	pthread_rwlock_wrlock(&db->strs.lock);
	rc = strtab_add(&db->strs, s, n, id);
	pthread_rwlock_unlock(&db->strs.lock);
	if (rc != NSR_OK)
		return rc;
	nsr_put_u32(key, *id);
	return mmdb_bt_put(txn->v, db->roots[T_STR], key, 4, s, n);
}

/* strtab_load - read the "str" tree into memory at open. */
static int strtab_load(struct mmdb *db, struct mmdb_view *v)
{
	struct mmdb_bt_cur cur;
	int rc;

	db->strs.n = 1;		/* id 0 is "" */
	rc = strtab_rehash(&db->strs, 512);
	if (rc == NSR_OK)
		rc = mmdb_bt_seek(&cur, v, db->roots[T_STR], NULL, 0);
	while (rc == NSR_OK && cur.valid) {
		const uint8_t *k, *val;
		size_t kl, vl;
		uint32_t id;

		mmdb_bt_key(&cur, &k, &kl);
		mmdb_bt_val(&cur, &val, &vl);
		if (kl != 4 || nsr_get_u32(k) != db->strs.n || vl == 0 ||
		    memchr(val, '\0', vl))
			return NSR_ERR_CORRUPT;
		rc = strtab_add(&db->strs, (const char *)val, vl, &id);
		if (rc == NSR_OK)
			rc = mmdb_bt_next(&cur);
	}
	return rc;
}

/* ---- open / close / transactions ------------------------------------- */

/* mmdb_opts_init - defaults. */
void mmdb_opts_init(struct mmdb_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->flags = MMDB_OPEN_CREATE;
}

/* last_key_u32 - the 4-byte prefix of the last key of a tree (0 if
 * the tree is empty). */
static int last_key_u32(struct mmdb_view *v, uint32_t root, uint32_t *out)
{
	struct mmdb_bt_cur cur;
	const uint8_t *k;
	size_t kl;
	int rc = mmdb_bt_last(&cur, v, root);

	*out = 0;
	if (rc != NSR_OK || !cur.valid)
		return rc;
	mmdb_bt_key(&cur, &k, &kl);
	if (kl < 4)
		return NSR_ERR_CORRUPT;
	*out = nsr_get_u32(k);
	return NSR_OK;
}

/* setup - create missing trees, load roots, strings and counters. */
static int setup(struct mmdb *db, int readonly)
{
	struct mmdb_view *v = NULL;
	uint32_t last;
	int rc = NSR_OK, missing = 0;

	rc = mmdb_pager_read_begin(db->pager, &v);
	for (int i = 0; i < T_COUNT && rc == NSR_OK; i++) {
		rc = mmdb_bt_open(v, mmdb_tree_names[i], 0, &db->roots[i]);
		if (rc == NSR_ERR_NOTFOUND) {
			missing = 1;
			rc = NSR_OK;
		}
	}
	mmdb_pager_read_end(v);
	v = NULL;
	if (rc != NSR_OK)
		return rc;
	if (missing) {
		if (readonly)
			return NSR_ERR_CORRUPT;
		rc = mmdb_pager_write_begin(db->pager, &v);
		for (int i = 0; i < T_COUNT && rc == NSR_OK; i++)
			rc = mmdb_bt_open(v, mmdb_tree_names[i], 1,
					  &db->roots[i]);
		if (rc != NSR_OK) {
			mmdb_pager_rollback(v);
			return rc;
		}
		rc = mmdb_pager_commit(v);
		if (rc != NSR_OK)
			return rc;
	}
	rc = mmdb_pager_read_begin(db->pager, &v);
	if (rc == NSR_OK)
		rc = strtab_load(db, v);
	if (rc == NSR_OK)
		rc = last_key_u32(v, db->roots[T_SS], &last);
	if (rc == NSR_OK) {
		db->next_ssid = last + 1;
		if (db->next_ssid == 0)
			db->next_ssid = 1;
		rc = last_key_u32(v, db->roots[T_VOL_NO], &last);
	}
	if (rc == NSR_OK)
		db->next_volno = last + 1;
	mmdb_pager_read_end(v);
	return rc;
}

/* mmdb_open - open the database in dir. */
int mmdb_open(const char *dir, const struct mmdb_opts *opts,
	      struct mmdb **out)
{
	struct mmdb_opts def;
	struct mmdb *db;
	unsigned pf = 0;
	uint64_t wal_max;
	const char *env = getenv("NSR_TEST_MMDB_WAL_MAX");
	int rc;

	*out = NULL;
	if (!opts) {
		mmdb_opts_init(&def);
		opts = &def;
	}
	if (opts->flags & MMDB_OPEN_CREATE)
		pf |= MMDB_PAGER_CREATE;
	if (opts->flags & MMDB_OPEN_READONLY)
		pf |= MMDB_PAGER_READONLY;
	wal_max = opts->wal_max_bytes;
	if (!wal_max && env)
		wal_max = strtoull(env, NULL, 10);
	db = calloc(1, sizeof(*db));
	if (!db)
		return NSR_ERR_NOMEM;
	pthread_rwlock_init(&db->strs.lock, NULL);
	rc = mmdb_pager_open(opts->vfs, dir, pf, wal_max, &db->pager);
	if (rc == NSR_OK) {
		const char *ce = getenv("NSR_TEST_MMDB_CACHE");
		size_t cache = opts->cache_pages;

		if (!cache && ce)
			cache = strtoul(ce, NULL, 10);
		mmdb_pager_set_cache(db->pager, cache ? cache : 16384);
		rc = setup(db, (opts->flags & MMDB_OPEN_READONLY) != 0);
	}
	if (rc != NSR_OK) {
		mmdb_close(db);
		return rc;
	}
	*out = db;
	return NSR_OK;
}

/* mmdb_close - close the pager and free the handle. */
void mmdb_close(struct mmdb *db)
{
	if (!db)
		return;
	mmdb_pager_close(db->pager);
	strtab_release(&db->strs);
	free(db);
}

/* mmdb_txn_begin - take the writer slot. */
int mmdb_txn_begin(struct mmdb *db, struct mmdb_txn **out)
{
	struct mmdb_txn *t;
	int rc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NSR_ERR_NOMEM;
	rc = mmdb_pager_write_begin(db->pager, &t->v);
	if (rc != NSR_OK) {
		free(t);
		return rc;
	}
	t->db = db;
	t->save_ssid = db->next_ssid;
	t->save_volno = db->next_volno;
	t->save_nstr = db->strs.n;
	*out = t;
	return NSR_OK;
}

/* mmdb_txn_abort - drop every change. */
void mmdb_txn_abort(struct mmdb_txn *t)
{
	struct mmdb *db;

	if (!t)
		return;
	db = t->db;
	db->next_ssid = t->save_ssid;
	db->next_volno = t->save_volno;
	strtab_truncate(&db->strs, t->save_nstr);
	mmdb_pager_rollback(t->v);	/* releases the writer slot last */
	free(t);
}

/* txn_undo - forget a failed transaction's counters and string ids
 * (called by the pager while the writer slot is still held). */
static void txn_undo(void *arg)
{
	struct mmdb_txn *t = arg;
	struct mmdb *db = t->db;

	db->next_ssid = t->save_ssid;
	db->next_volno = t->save_volno;
	strtab_truncate(&db->strs, t->save_nstr);
}

/* mmdb_txn_commit - durable commit (see mmdb.h). */
int mmdb_txn_commit(struct mmdb_txn *t)
{
	int rc;

	if (t->failed) {
		rc = t->failed;
		mmdb_txn_abort(t);
		return rc;
	}
	rc = mmdb_pager_commit_undo(t->v, txn_undo, t);
	free(t);
	return rc;
}

/* mmdb_txn_end - commit on NSR_OK, else abort (see mmdb.h). */
int mmdb_txn_end(struct mmdb_txn *t, int rc)
{
	if (rc != NSR_OK || !t) {
		mmdb_txn_abort(t);
		return rc != NSR_OK ? rc : NSR_ERR_INVAL;
	}
	return mmdb_txn_commit(t);
}

/* begin - use txn or start an autocommit one (*own = 1). */
static int begin(struct mmdb *db, struct mmdb_txn *txn, struct mmdb_txn **t,
		 int *own)
{
	*own = 0;
	*t = txn;
	if (txn)
		return txn->failed ? NSR_ERR_STATE : NSR_OK;
	*own = 1;
	return mmdb_txn_begin(db, t);
}

/* finish - end an operation: commit/abort an own txn, poison a caller's
 * txn on failure (so a half-done operation can never be committed). */
static int finish(struct mmdb_txn *t, int own, int rc)
{
	if (!own) {
		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND &&
		    rc != NSR_ERR_EXISTS && rc != NSR_ERR_INVAL &&
		    rc != NSR_ERR_TOOBIG)
			t->failed = rc;
		return rc;
	}
	if (rc != NSR_OK) {
		mmdb_txn_abort(t);
		return rc;
	}
	return mmdb_txn_commit(t);
}

/* ---- volumes --------------------------------------------------------- */

/* vol_valid - argument checks for a volume record. */
static int vol_valid(const struct mmdb_volume *v)
{
	static const uint8_t zero[16];

	if (v->name[0] == '\0' ||
	    strnlen(v->name, sizeof(v->name)) > MMDB_VOLNAME_MAX ||
	    strnlen(v->pool, sizeof(v->pool)) > MMDB_POOL_MAX ||
	    strnlen(v->type, sizeof(v->type)) > MMDB_MEDIATYPE_MAX ||
	    strnlen(v->location, sizeof(v->location)) > MMDB_LOCATION_MAX ||
	    strnlen(v->device, sizeof(v->device)) > MMDB_DEVICE_MAX ||
	    memcmp(v->volid, zero, 16) == 0 ||
	    (v->flags & ~(uint32_t)MMDB_VOL_ALLFLAGS))
		return NSR_ERR_INVAL;
	return NSR_OK;
}

/* pool_key - "pool NUL name" key; returns its length. */
static size_t pool_key(uint8_t *k, const char *pool, const char *name)
{
	size_t pl = strlen(pool), nl = strlen(name);

	memcpy(k, pool, pl);
	k[pl] = '\0';
	memcpy(k + pl + 1, name, nl);
	return pl + 1 + nl;
}

/* vol_load - volume by name with its volno. */
static int vol_load(struct mmdb *db, struct mmdb_view *v, const char *name,
		    struct mmdb_volume *out, uint32_t *volno)
{
	const uint8_t *val;
	size_t vl;
	int rc;

	rc = mmdb_bt_get(v, db->roots[T_VOL], name, strlen(name), &val, &vl);
	if (rc != NSR_OK)
		return rc;
	if (vl < 4)
		return NSR_ERR_CORRUPT;
	if (volno)
		*volno = nsr_get_u32(val);
	rc = mmdb_vol_decode(val + 4, vl - 4, out);
	if (rc == NSR_OK && strcmp(out->name, name) != 0)
		rc = NSR_ERR_CORRUPT;
	return rc;
}

/* name_of - a tree value holding a volume name into out. */
static int name_of(struct mmdb_view *v, uint32_t root, const void *key,
		   size_t klen, char *out)
{
	const uint8_t *val;
	size_t vl;
	int rc = mmdb_bt_get(v, root, key, klen, &val, &vl);

	if (rc != NSR_OK)
		return rc;
	if (vl == 0 || vl > MMDB_VOLNAME_MAX)
		return NSR_ERR_CORRUPT;
	memcpy(out, val, vl);
	out[vl] = '\0';
	return NSR_OK;
}

/* mmdb_vol_by_no - volume by its internal number. */
int mmdb_vol_by_no(struct mmdb *db, struct mmdb_view *v, uint32_t volno,
		   struct mmdb_volume *out)
{
	char name[MMDB_VOLNAME_MAX + 1];
	uint8_t k[4];
	uint32_t got;
	int rc;

	nsr_put_u32(k, volno);
	rc = name_of(v, db->roots[T_VOL_NO], k, 4, name);
	if (rc == NSR_OK)
		rc = vol_load(db, v, name, out, &got);
	if (rc == NSR_OK && got != volno)
		rc = NSR_ERR_CORRUPT;
	return rc == NSR_ERR_NOTFOUND ? NSR_ERR_CORRUPT : rc;
}

/* mmdb_volno_by_name - internal number of a volume name. */
int mmdb_volno_by_name(struct mmdb *db, struct mmdb_view *v,
		       const char *name, uint32_t *volno)
{
	struct mmdb_volume vol;

	return vol_load(db, v, name, &vol, volno);
}

/* mmdb_volno_by_id - internal number of a volid. */
int mmdb_volno_by_id(struct mmdb *db, struct mmdb_view *v,
		     const uint8_t volid[16], uint32_t *volno)
{
	char name[MMDB_VOLNAME_MAX + 1];
	int rc = name_of(v, db->roots[T_VOL_ID], volid, 16, name);

	if (rc != NSR_OK)
		return rc;
	return mmdb_volno_by_name(db, v, name, volno);
}

/* vol_put_tx - insert or replace a volume inside txn. */
static int vol_put_tx(struct mmdb_txn *t, const struct mmdb_volume *vol)
{
	struct mmdb *db = t->db;
	struct mmdb_volume old;
	char owner[MMDB_VOLNAME_MAX + 1];
	uint8_t k[MMDB_POOL_MAX + 1 + MMDB_VOLNAME_MAX], nk[4];
	struct nsr_buf b;
	uint32_t volno;
	int rc, exists;

	rc = vol_valid(vol);
	if (rc != NSR_OK)
		return rc;
	rc = vol_load(db, t->v, vol->name, &old, &volno);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		return rc;
	exists = rc == NSR_OK;
	rc = name_of(t->v, db->roots[T_VOL_ID], vol->volid, 16, owner);
	if (rc == NSR_OK && strcmp(owner, vol->name) != 0)
		return NSR_ERR_EXISTS;
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		return rc;
	if (exists) {
		if (memcmp(old.volid, vol->volid, 16) != 0) {
			rc = mmdb_bt_del(t->v, db->roots[T_VOL_ID], old.volid,
					 16);
			if (rc != NSR_OK)
				return rc;
		}
		if (strcmp(old.pool, vol->pool) != 0) {
			rc = mmdb_bt_del(t->v, db->roots[T_VOL_POOL], k,
					 pool_key(k, old.pool, old.name));
			if (rc != NSR_OK)
				return rc;
		}
	} else {
		volno = db->next_volno++;
		if (volno == 0)
			return NSR_ERR_LIMIT;
	}
	nsr_buf_init(&b, 0);
	nsr_put_u32(nk, volno);
	rc = nsr_buf_add(&b, nk, 4);
	if (rc == NSR_OK)
		rc = mmdb_vol_encode(vol, &b);
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, db->roots[T_VOL], vol->name,
				 strlen(vol->name), b.data, b.len);
	nsr_buf_release(&b);
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, db->roots[T_VOL_ID], vol->volid, 16,
				 vol->name, strlen(vol->name));
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, db->roots[T_VOL_NO], nk, 4, vol->name,
				 strlen(vol->name));
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, db->roots[T_VOL_POOL], k,
				 pool_key(k, vol->pool, vol->name), NULL, 0);
	return rc;
}

/* mmdb_vol_put - insert or replace a volume. */
int mmdb_vol_put(struct mmdb *db, struct mmdb_txn *txn,
		 const struct mmdb_volume *vol)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, vol_put_tx(t, vol));
}

/* with_read - run a read-only lookup under a fresh read view. */
static int read_view(struct mmdb *db, struct mmdb_view **v)
{
	return mmdb_pager_read_begin(db->pager, v);
}

/* mmdb_vol_get - volume by name. */
int mmdb_vol_get(struct mmdb *db, const char *name, struct mmdb_volume *out)
{
	struct mmdb_view *v;
	int rc = read_view(db, &v);

	memset(out, 0, sizeof(*out));
	if (rc != NSR_OK)
		return rc;
	if (strlen(name) == 0 || strlen(name) > MMDB_VOLNAME_MAX)
		rc = NSR_ERR_NOTFOUND;
	else
		rc = vol_load(db, v, name, out, NULL);
	mmdb_pager_read_end(v);
	return rc;
}

/* mmdb_vol_get_by_id - volume by volid. */
int mmdb_vol_get_by_id(struct mmdb *db, const uint8_t volid[16],
		       struct mmdb_volume *out)
{
	char name[MMDB_VOLNAME_MAX + 1];
	struct mmdb_view *v;
	int rc = read_view(db, &v);

	memset(out, 0, sizeof(*out));
	if (rc != NSR_OK)
		return rc;
	rc = name_of(v, db->roots[T_VOL_ID], volid, 16, name);
	if (rc == NSR_OK)
		rc = vol_load(db, v, name, out, NULL);
	mmdb_pager_read_end(v);
	return rc;
}

/* ---- save set records ------------------------------------------------ */

/* mmdb_ss_load - stored record of ssid. */
int mmdb_ss_load(struct mmdb *db, struct mmdb_view *v, uint32_t ssid,
		 struct ssrec *r)
{
	const uint8_t *val;
	uint8_t k[4];
	size_t vl;
	int rc;

	nsr_put_u32(k, ssid);
	rc = mmdb_bt_get(v, db->roots[T_SS], k, 4, &val, &vl);
	if (rc != NSR_OK)
		return rc;
	return mmdb_ssrec_decode(val, vl, ssid, r);
}

/* ss_store - write the record of r->ssid. */
static int ss_store(struct mmdb_txn *t, const struct ssrec *r)
{
	uint8_t *buf = malloc(SSREC_MAX);
	uint8_t k[4];
	size_t len;
	int rc;

	if (!buf)
		return NSR_ERR_NOMEM;
	rc = mmdb_ssrec_encode(r, buf, SSREC_MAX, &len);
	nsr_put_u32(k, r->ssid);
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, t->db->roots[T_SS], k, 4, buf, len);
	free(buf);
	return rc;
}

/* cnt_key - ss_cnt index key. */
static void cnt_key(uint8_t k[20], const struct ssrec *r)
{
	nsr_put_u32(k, r->client);
	nsr_put_u32(k + 4, r->name);
	mmdb_key_time(k + 8, r->savetime);
	nsr_put_u32(k + 16, r->ssid);
}

/* time_key - ss_time index key. */
static void time_key(uint8_t k[12], const struct ssrec *r)
{
	mmdb_key_time(k, r->savetime);
	nsr_put_u32(k + 8, r->ssid);
}

/* fv_key - frag_vol index key. */
static void fv_key(uint8_t k[8], uint32_t volno, uint32_t ssid)
{
	nsr_put_u32(k, volno);
	nsr_put_u32(k + 4, ssid);
}

/* index_put - add (or with del, remove) the ss_cnt and ss_time entries. */
static int index_put(struct mmdb_txn *t, const struct ssrec *r, int del)
{
	uint8_t ck[20], tk[12];
	int rc;

	cnt_key(ck, r);
	time_key(tk, r);
	if (del) {
		rc = mmdb_bt_del(t->v, t->db->roots[T_SS_CNT], ck, 20);
		if (rc == NSR_OK)
			rc = mmdb_bt_del(t->v, t->db->roots[T_SS_TIME], tk, 12);
		return rc == NSR_ERR_NOTFOUND ? NSR_ERR_CORRUPT : rc;
	}
	rc = mmdb_bt_put(t->v, t->db->roots[T_SS_CNT], ck, 20, NULL, 0);
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, t->db->roots[T_SS_TIME], tk, 12, NULL,
				 0);
	return rc;
}

/* ss_valid - argument checks for a save set. */
static int ss_valid(const struct mmdb_saveset *ss)
{
	if (ss->client[0] == '\0' || ss->name[0] == '\0' ||
	    strnlen(ss->client, sizeof(ss->client)) > MMDB_CLIENT_MAX ||
	    strnlen(ss->name, sizeof(ss->name)) > MMDB_SSNAME_MAX ||
	    strnlen(ss->pool, sizeof(ss->pool)) > MMDB_POOL_MAX ||
	    strnlen(ss->group, sizeof(ss->group)) > MMDB_GROUP_MAX ||
	    ss->level > NSR_LEVEL_MAX || ss->ndependents > MMDB_PSS_MAX ||
	    (ss->flags & ~(uint32_t)MMDB_SS_ALLFLAGS))
		return NSR_ERR_INVAL;
	return NSR_OK;
}

/* ss_import - set the attribute fields of r from ss (interning strings). */
static int ss_import(struct mmdb_txn *t, const struct mmdb_saveset *ss,
		     struct ssrec *r)
{
	int rc = ss_valid(ss);

	if (rc == NSR_OK)
		rc = intern(t, ss->client, &r->client);
	if (rc == NSR_OK)
		rc = intern(t, ss->name, &r->name);
	if (rc == NSR_OK)
		rc = intern(t, ss->pool, &r->pool);
	if (rc == NSR_OK)
		rc = intern(t, ss->group, &r->group);
	if (rc != NSR_OK)
		return rc;
	r->level = ss->level;
	r->flags = ss->flags;
	r->savetime = ss->savetime;
	r->sscreate = ss->sscreate;
	r->sscomp = ss->sscomp;
	r->ssbrowse = ss->ssbrowse;
	r->ssretent = ss->ssretent;
	r->totalsize = ss->totalsize;
	r->nfiles = ss->nfiles;
	r->pssid = ss->pssid;
	r->anchor_time = ss->anchor_time;
	r->ndeps = ss->ndependents;
	memcpy(r->deps, ss->dependents, sizeof(r->deps));
	return NSR_OK;
}

/* mmdb_ss_export - public form of a stored record. */
int mmdb_ss_export(struct mmdb *db, const struct ssrec *r,
		   struct mmdb_saveset *ss)
{
	const uint8_t *id = mmdb_pager_dbid(db->pager);
	int rc;

	ss->ssid = r->ssid;
	/* The long id: database id (8), ssid (4), save time (4). */
	memcpy(ss->longid, id, 8);
	nsr_put_u32(ss->longid + 8, r->ssid);
	nsr_put_u32(ss->longid + 12, (uint32_t)r->savetime);
	rc = mmdb_str_get(db, r->client, ss->client, sizeof(ss->client));
	if (rc == NSR_OK)
		rc = mmdb_str_get(db, r->name, ss->name, sizeof(ss->name));
	if (rc == NSR_OK)
		rc = mmdb_str_get(db, r->pool, ss->pool, sizeof(ss->pool));
	if (rc == NSR_OK)
		rc = mmdb_str_get(db, r->group, ss->group, sizeof(ss->group));
	ss->level = r->level;
	ss->flags = r->flags;
	ss->savetime = r->savetime;
	ss->sscreate = r->sscreate;
	ss->sscomp = r->sscomp;
	ss->ssbrowse = r->ssbrowse;
	ss->ssretent = r->ssretent;
	ss->totalsize = r->totalsize;
	ss->nfiles = r->nfiles;
	ss->pssid = r->pssid;
	ss->anchor_time = r->anchor_time;
	ss->ndependents = r->ndeps;
	memcpy(ss->dependents, r->deps, sizeof(ss->dependents));
	return rc;
}

/* alloc_ssid - a fresh ssid not held by any save set. */
static int alloc_ssid(struct mmdb_txn *t, uint32_t *ssid)
{
	struct mmdb *db = t->db;

	for (uint64_t tries = 0; tries <= UINT32_MAX; tries++) {
		const uint8_t *val;
		uint8_t k[4];
		size_t vl;
		uint32_t cand = db->next_ssid;
		int rc;

		db->next_ssid = cand == UINT32_MAX ? 1 : cand + 1;
		nsr_put_u32(k, cand);
		rc = mmdb_bt_get(t->v, db->roots[T_SS], k, 4, &val, &vl);
		if (rc == NSR_ERR_NOTFOUND) {
			*ssid = cand;
			return NSR_OK;
		}
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_ERR_LIMIT;
}

/* ss_create_tx - body of mmdb_ss_create (ssid 0: allocate one) and of
 * mmdb_ss_restore (the given ssid, which must be free). */
static int ss_create_tx(struct mmdb_txn *t, struct mmdb_saveset *ss,
			uint32_t ssid, uint32_t cloneid, uint32_t *cloneid_out)
{
	struct ssrec *r = calloc(1, sizeof(*r));
	int rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = ss_import(t, ss, r);
	if (rc == NSR_OK && ssid) {
		const uint8_t *val;
		uint8_t k[4];
		size_t vl;

		nsr_put_u32(k, ssid);
		rc = mmdb_bt_get(t->v, t->db->roots[T_SS], k, 4, &val, &vl);
		if (rc == NSR_OK)
			rc = NSR_ERR_EXISTS;
		else if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_OK;
		r->ssid = ssid;
	} else if (rc == NSR_OK) {
		rc = alloc_ssid(t, &r->ssid);
	}
	if (rc != NSR_OK)
		goto out;
	if (cloneid == 0)
		cloneid = (uint32_t)ss->savetime;
	if (cloneid == 0)
		cloneid = 1;
	r->nclones = 1;
	r->clones[0].cloneid = cloneid;
	r->clones[0].clone_time = ss->savetime;
	r->clones[0].clretent = ss->ssretent;
	rc = ss_store(t, r);
	if (rc == NSR_OK)
		rc = index_put(t, r, 0);
	if (rc == NSR_OK) {
		mmdb_ss_export(t->db, r, ss);
		if (cloneid_out)
			*cloneid_out = cloneid;
	}
out:
	free(r);
	return rc;
}

/* mmdb_ss_create - new save set with a fresh ssid. */
int mmdb_ss_create(struct mmdb *db, struct mmdb_txn *txn,
		   struct mmdb_saveset *ss, uint32_t cloneid,
		   uint32_t *cloneid_out)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, ss_create_tx(t, ss, 0, cloneid, cloneid_out));
}

/* mmdb_ss_restore - store a save set under the ssid it already has. */
int mmdb_ss_restore(struct mmdb *db, struct mmdb_txn *txn,
		    struct mmdb_saveset *ss, uint32_t cloneid)
{
	struct mmdb_txn *t;
	int own, rc;

	if (ss->ssid == 0)
		return NSR_ERR_INVAL;
	rc = begin(db, txn, &t, &own);
	if (rc != NSR_OK)
		return rc;
	return finish(t, own, ss_create_tx(t, ss, ss->ssid, cloneid, NULL));
}

/* ss_update_tx - body of mmdb_ss_update. */
static int ss_update_tx(struct mmdb_txn *t, const struct mmdb_saveset *ss)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct ssrec *old = malloc(sizeof(*old));
	int rc = NSR_ERR_NOMEM;

	if (!r || !old)
		goto out;
	rc = mmdb_ss_load(t->db, t->v, ss->ssid, r);
	if (rc != NSR_OK)
		goto out;
	*old = *r;
	rc = ss_import(t, ss, r);
	if (rc != NSR_OK)
		goto out;
	if (old->client != r->client || old->name != r->name ||
	    old->savetime != r->savetime) {
		rc = index_put(t, old, 1);
		if (rc == NSR_OK)
			rc = index_put(t, r, 0);
	}
	if (rc == NSR_OK)
		rc = ss_store(t, r);
out:
	free(r);
	free(old);
	return rc;
}

/* mmdb_ss_update - replace attributes of an existing save set. */
int mmdb_ss_update(struct mmdb *db, struct mmdb_txn *txn,
		   const struct mmdb_saveset *ss)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, ss_update_tx(t, ss));
}

/* mmdb_ss_get - save set by ssid. */
int mmdb_ss_get(struct mmdb *db, uint32_t ssid, struct mmdb_saveset *out)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct mmdb_view *v = NULL;
	int rc = NSR_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	if (!r)
		return rc;
	rc = read_view(db, &v);
	if (rc == NSR_OK)
		rc = mmdb_ss_load(db, v, ssid, r);
	if (rc == NSR_OK)
		rc = mmdb_ss_export(db, r, out);
	mmdb_pager_read_end(v);
	free(r);
	return rc;
}

/* has_volno - whether any fragment of r other than skip lies on volno. */
static int has_volno(const struct ssrec *r, uint32_t volno, int skip)
{
	for (uint32_t i = 0; i < r->nfrags; i++)
		if ((int)i != skip && r->frags[i].volno == volno)
			return 1;
	return 0;
}

/* ss_delete_tx - body of mmdb_ss_delete. */
static int ss_delete_tx(struct mmdb_txn *t, uint32_t ssid)
{
	struct ssrec *r = malloc(sizeof(*r));
	uint8_t k[8];
	int rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = mmdb_ss_load(t->db, t->v, ssid, r);
	if (rc == NSR_OK)
		rc = index_put(t, r, 1);
	for (uint32_t i = 0; i < r->nfrags && rc == NSR_OK; i++) {
		int dup = 0;

		/* one index entry per distinct volume */
		for (uint32_t j = 0; j < i; j++)
			if (r->frags[j].volno == r->frags[i].volno)
				dup = 1;
		if (dup)
			continue;
		fv_key(k, r->frags[i].volno, ssid);
		rc = mmdb_bt_del(t->v, t->db->roots[T_FRAG_VOL], k, 8);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_ERR_CORRUPT;
	}
	if (rc == NSR_OK) {
		nsr_put_u32(k, ssid);
		rc = mmdb_bt_del(t->v, t->db->roots[T_SS], k, 4);
	}
	free(r);
	return rc;
}

/* mmdb_ss_delete - remove a save set with fragments and clones. */
int mmdb_ss_delete(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, ss_delete_tx(t, ssid));
}

/* ---- fragments and clones -------------------------------------------- */

/* clone_index - index of cloneid in r, or -1. */
static int clone_index(const struct ssrec *r, uint32_t cloneid)
{
	for (uint32_t i = 0; i < r->nclones; i++)
		if (r->clones[i].cloneid == cloneid)
			return (int)i;
	return -1;
}

/* frag_add_tx - body of mmdb_frag_add. */
static int frag_add_tx(struct mmdb_txn *t, const struct mmdb_fragment *f)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct ss_frag nf;
	uint8_t k[8];
	uint32_t volno, pos;
	int ci, rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = mmdb_ss_load(t->db, t->v, f->ssid, r);
	if (rc != NSR_OK)
		goto out;
	ci = clone_index(r, f->cloneid);
	rc = NSR_ERR_NOTFOUND;
	if (ci < 0 || (f->flags & ~0xfu))
		goto out;
	rc = mmdb_volno_by_id(t->db, t->v, f->volid, &volno);
	if (rc != NSR_OK)
		goto out;
	memset(&nf, 0, sizeof(nf));
	nf.clone = (uint8_t)ci;
	nf.volno = volno;
	nf.seq = f->seq;
	nf.ss_offset = f->ss_offset;
	nf.size = f->size;
	nf.file = f->file;
	nf.record = f->record;
	nf.offset = f->offset;
	nf.flags = f->flags;
	/* Keep fragments ordered by (clone, seq); replace an equal one. */
	for (pos = 0; pos < r->nfrags; pos++) {
		const struct ss_frag *o = &r->frags[pos];

		if (o->clone > nf.clone ||
		    (o->clone == nf.clone && o->seq >= nf.seq))
			break;
	}
	if (pos < r->nfrags && r->frags[pos].clone == nf.clone &&
	    r->frags[pos].seq == nf.seq) {
		uint32_t oldvol = r->frags[pos].volno;

		if (oldvol != volno && !has_volno(r, oldvol, (int)pos)) {
			fv_key(k, oldvol, r->ssid);
			rc = mmdb_bt_del(t->v, t->db->roots[T_FRAG_VOL], k, 8);
			if (rc != NSR_OK)
				goto out;
		}
		r->frags[pos] = nf;
	} else {
		rc = NSR_ERR_TOOBIG;
		if (r->nfrags == MMDB_FRAGS_MAX)
			goto out;
		memmove(&r->frags[pos + 1], &r->frags[pos],
			(r->nfrags - pos) * sizeof(r->frags[0]));
		r->frags[pos] = nf;
		r->nfrags++;
	}
	rc = ss_store(t, r);
	fv_key(k, volno, r->ssid);
	if (rc == NSR_OK)
		rc = mmdb_bt_put(t->v, t->db->roots[T_FRAG_VOL], k, 8, NULL, 0);
out:
	free(r);
	return rc;
}

/* mmdb_frag_add - record a fragment. */
int mmdb_frag_add(struct mmdb *db, struct mmdb_txn *txn,
		  const struct mmdb_fragment *frag)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, frag_add_tx(t, frag));
}

/* frag_export - public form of stored fragment i of r. */
static int frag_export(struct mmdb *db, struct mmdb_view *v,
		       const struct ssrec *r, uint32_t i,
		       struct mmdb_fragment *out)
{
	const struct ss_frag *f = &r->frags[i];
	struct mmdb_volume vol;
	int rc = mmdb_vol_by_no(db, v, f->volno, &vol);

	memset(out, 0, sizeof(*out));
	if (rc != NSR_OK)
		return rc;
	out->ssid = r->ssid;
	out->cloneid = r->clones[f->clone].cloneid;
	memcpy(out->volid, vol.volid, 16);
	out->seq = f->seq;
	out->ss_offset = f->ss_offset;
	out->size = f->size;
	out->file = f->file;
	out->record = f->record;
	out->offset = f->offset;
	out->flags = f->flags;
	return NSR_OK;
}

/* mmdb_frag_list - fragments of ssid. */
int mmdb_frag_list(struct mmdb *db, uint32_t ssid, struct mmdb_fragment *out,
		   size_t max, size_t *n)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct mmdb_view *v = NULL;
	int rc = NSR_ERR_NOMEM;

	*n = 0;
	if (!r)
		return rc;
	rc = read_view(db, &v);
	if (rc == NSR_OK)
		rc = mmdb_ss_load(db, v, ssid, r);
	if (rc == NSR_OK) {
		*n = r->nfrags;
		for (uint32_t i = 0; i < r->nfrags && i < max && rc == NSR_OK;
		     i++)
			rc = frag_export(db, v, r, i, &out[i]);
	}
	mmdb_pager_read_end(v);
	free(r);
	return rc;
}

/* mmdb_frag_by_volume - every fragment on one volume. */
int mmdb_frag_by_volume(struct mmdb *db, const uint8_t volid[16],
			mmdb_frag_fn fn, void *arg)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct mmdb_view *v = NULL;
	struct mmdb_bt_cur cur;
	uint32_t volno = 0;
	uint8_t k[8];
	int rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = read_view(db, &v);
	if (rc == NSR_OK)
		rc = mmdb_volno_by_id(db, v, volid, &volno);
	if (rc == NSR_OK) {
		fv_key(k, volno, 0);
		rc = mmdb_bt_seek(&cur, v, db->roots[T_FRAG_VOL], k, 8);
	}
	while (rc == NSR_OK && cur.valid) {
		const uint8_t *key;
		size_t kl;

		mmdb_bt_key(&cur, &key, &kl);
		if (kl != 8 || nsr_get_u32(key) != volno)
			break;
		rc = mmdb_ss_load(db, v, nsr_get_u32(key + 4), r);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_ERR_CORRUPT;
		for (uint32_t i = 0; i < r->nfrags && rc == NSR_OK; i++) {
			struct mmdb_fragment f;

			if (r->frags[i].volno != volno)
				continue;
			rc = frag_export(db, v, r, i, &f);
			if (rc == NSR_OK)
				rc = fn(arg, &f);
		}
		if (rc == NSR_OK)
			rc = mmdb_bt_next(&cur);
	}
	mmdb_pager_read_end(v);
	free(r);
	return rc;
}

/* vol_delete_tx - body of mmdb_vol_delete. */
static int vol_delete_tx(struct mmdb_txn *t, const char *name)
{
	struct mmdb *db = t->db;
	struct ssrec *r = malloc(sizeof(*r));
	struct mmdb_volume vol;
	uint8_t k[MMDB_POOL_MAX + 1 + MMDB_VOLNAME_MAX], fk[8];
	uint32_t volno;
	int rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = vol_load(db, t->v, name, &vol, &volno);
	/* Drop every fragment on it: take the frag_vol entries one at a
	 * time (the tree changes under us, so re-seek each time). */
	while (rc == NSR_OK) {
		struct mmdb_bt_cur cur;
		const uint8_t *key;
		size_t kl;
		uint32_t ssid, j = 0;

		fv_key(fk, volno, 0);
		rc = mmdb_bt_seek(&cur, t->v, db->roots[T_FRAG_VOL], fk, 8);
		if (rc != NSR_OK || !cur.valid)
			break;
		mmdb_bt_key(&cur, &key, &kl);
		if (kl != 8 || nsr_get_u32(key) != volno)
			break;
		ssid = nsr_get_u32(key + 4);
		rc = mmdb_ss_load(db, t->v, ssid, r);
		if (rc != NSR_OK)
			break;
		for (uint32_t i = 0; i < r->nfrags; i++)
			if (r->frags[i].volno != volno)
				r->frags[j++] = r->frags[i];
		r->nfrags = j;
		rc = ss_store(t, r);
		fv_key(fk, volno, ssid);
		if (rc == NSR_OK)
			rc = mmdb_bt_del(t->v, db->roots[T_FRAG_VOL], fk, 8);
	}
	nsr_put_u32(fk, volno);
	if (rc == NSR_OK)
		rc = mmdb_bt_del(t->v, db->roots[T_VOL], name, strlen(name));
	if (rc == NSR_OK)
		rc = mmdb_bt_del(t->v, db->roots[T_VOL_ID], vol.volid, 16);
	if (rc == NSR_OK)
		rc = mmdb_bt_del(t->v, db->roots[T_VOL_NO], fk, 4);
	if (rc == NSR_OK)
		rc = mmdb_bt_del(t->v, db->roots[T_VOL_POOL], k,
				 pool_key(k, vol.pool, vol.name));
	free(r);
	return rc;
}

/* mmdb_vol_delete - remove a volume and its fragments. */
int mmdb_vol_delete(struct mmdb *db, struct mmdb_txn *txn, const char *name)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	if (strlen(name) == 0 || strlen(name) > MMDB_VOLNAME_MAX)
		return finish(t, own, NSR_ERR_NOTFOUND);
	return finish(t, own, vol_delete_tx(t, name));
}

/* clone_add_tx - body of mmdb_clone_add. */
static int clone_add_tx(struct mmdb_txn *t, const struct mmdb_clone *c,
			uint32_t *cloneid_out)
{
	struct ssrec *r = malloc(sizeof(*r));
	uint32_t id = c->cloneid;
	int rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = mmdb_ss_load(t->db, t->v, c->ssid, r);
	if (rc != NSR_OK)
		goto out;
	rc = NSR_ERR_TOOBIG;
	if (r->nclones == MMDB_CLONES_MAX)
		goto out;
	if (id == 0) {
		id = (uint32_t)c->clone_time;
		while (id == 0 || clone_index(r, id) >= 0)
			id++;
	} else if (clone_index(r, id) >= 0) {
		rc = NSR_ERR_EXISTS;
		goto out;
	}
	r->clones[r->nclones].cloneid = id;
	r->clones[r->nclones].clone_time = c->clone_time;
	r->clones[r->nclones].clretent = c->clretent;
	r->clones[r->nclones].flags = c->flags;
	r->nclones++;
	rc = ss_store(t, r);
	if (rc == NSR_OK && cloneid_out)
		*cloneid_out = id;
out:
	free(r);
	return rc;
}

/* mmdb_clone_add - add a clone instance. */
int mmdb_clone_add(struct mmdb *db, struct mmdb_txn *txn,
		   const struct mmdb_clone *clone, uint32_t *cloneid_out)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, clone_add_tx(t, clone, cloneid_out));
}

/* mmdb_clone_list - clone instances of ssid. */
int mmdb_clone_list(struct mmdb *db, uint32_t ssid, struct mmdb_clone *out,
		    size_t max, size_t *n)
{
	struct ssrec *r = malloc(sizeof(*r));
	struct mmdb_view *v = NULL;
	int rc = NSR_ERR_NOMEM;

	*n = 0;
	if (!r)
		return rc;
	rc = read_view(db, &v);
	if (rc == NSR_OK)
		rc = mmdb_ss_load(db, v, ssid, r);
	if (rc == NSR_OK) {
		*n = r->nclones;
		for (uint32_t i = 0; i < r->nclones && i < max; i++) {
			out[i].ssid = ssid;
			out[i].cloneid = r->clones[i].cloneid;
			out[i].clone_time = r->clones[i].clone_time;
			out[i].clretent = r->clones[i].clretent;
			out[i].flags = r->clones[i].flags;
		}
	}
	mmdb_pager_read_end(v);
	free(r);
	return rc;
}

/* clone_load - the record of ssid into r and the index of its clone
 * cloneid into *ci; NSR_ERR_NOTFOUND if either is missing. */
static int clone_load(struct mmdb_txn *t, uint32_t ssid, uint32_t cloneid,
		      struct ssrec *r, int *ci)
{
	int rc = mmdb_ss_load(t->db, t->v, ssid, r);

	*ci = rc == NSR_OK ? clone_index(r, cloneid) : -1;
	return rc == NSR_OK && *ci < 0 ? NSR_ERR_NOTFOUND : rc;
}

/* clone_set_tx - body of mmdb_clone_set. */
static int clone_set_tx(struct mmdb_txn *t, uint32_t ssid, uint32_t cloneid,
			uint32_t set, uint32_t clear)
{
	struct ssrec *r = malloc(sizeof(*r));
	int ci, rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = clone_load(t, ssid, cloneid, r, &ci);
	if (rc == NSR_OK) {
		r->clones[ci].flags |= set;
		r->clones[ci].flags &= ~clear;
		rc = ss_store(t, r);
	}
	free(r);
	return rc;
}

/* mmdb_clone_set - OR set into, then clear from, a clone's flags. */
int mmdb_clone_set(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid,
		   uint32_t cloneid, uint32_t set, uint32_t clear)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, clone_set_tx(t, ssid, cloneid, set, clear));
}

/* clone_remove_tx - body of mmdb_clone_remove: drop the instance's
 * fragments (and the frag_vol entries of volumes no fragment of the save
 * set is left on), renumber the later instances' fragments. */
static int clone_remove_tx(struct mmdb_txn *t, uint32_t ssid,
			   uint32_t cloneid)
{
	struct ssrec *r = malloc(sizeof(*r));
	uint32_t gone[MMDB_FRAGS_MAX], ngone = 0, j = 0;
	uint8_t k[8];
	int ci, rc = NSR_ERR_NOMEM;

	if (!r)
		return rc;
	rc = clone_load(t, ssid, cloneid, r, &ci);
	if (rc == NSR_OK && r->nclones < 2)
		rc = NSR_ERR_STATE; /* the last copy goes with the save set */
	if (rc != NSR_OK)
		goto out;
	for (uint32_t i = 0; i < r->nfrags; i++) {
		struct ss_frag f = r->frags[i];

		if (f.clone == (uint8_t)ci) {
			gone[ngone++] = f.volno;
			continue;
		}
		if (f.clone > (uint8_t)ci)
			f.clone--;
		r->frags[j++] = f;
	}
	r->nfrags = j;
	memmove(&r->clones[ci], &r->clones[ci + 1],
		(r->nclones - (uint32_t)ci - 1) * sizeof(r->clones[0]));
	r->nclones--;
	rc = ss_store(t, r);
	for (uint32_t i = 0; rc == NSR_OK && i < ngone; i++) {
		int dup = 0;

		for (uint32_t g = 0; g < i; g++)
			dup |= gone[g] == gone[i];
		if (dup || has_volno(r, gone[i], -1))
			continue;
		fv_key(k, gone[i], ssid);
		rc = mmdb_bt_del(t->v, t->db->roots[T_FRAG_VOL], k, 8);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_ERR_CORRUPT;
	}
out:
	free(r);
	return rc;
}

/* mmdb_clone_remove - remove one clone instance and its fragments. */
int mmdb_clone_remove(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid,
		      uint32_t cloneid)
{
	struct mmdb_txn *t;
	int own, rc = begin(db, txn, &t, &own);

	if (rc != NSR_OK)
		return rc;
	return finish(t, own, clone_remove_tx(t, ssid, cloneid));
}

/* ---- snapshot and stats ---------------------------------------------- */

/* mmdb_snapshot - stream every page of one committed state. */
int mmdb_snapshot(struct mmdb *db, mmdb_write_fn fn, void *arg,
		  uint64_t *commit_seq)
{
	struct mmdb_view *v = NULL;
	uint32_t npages;
	int rc = read_view(db, &v);

	if (rc != NSR_OK)
		return rc;
	if (commit_seq)
		*commit_seq = mmdb_pager_view_seq(v);
	npages = mmdb_pager_npages(v);
	for (uint32_t i = 0; i < npages && rc == NSR_OK; i++) {
		const uint8_t *pg;

		rc = mmdb_pager_get(v, i, &pg);
		if (rc == NSR_OK)
			rc = fn(arg, pg, MMDB_PAGE_SIZE);
	}
	mmdb_pager_read_end(v);
	return rc;
}

/* count_tree - entries of a tree (a full walk). */
static int count_tree(struct mmdb_view *v, uint32_t root, uint64_t *n)
{
	struct mmdb_bt_cur cur;
	int rc = mmdb_bt_seek(&cur, v, root, NULL, 0);

	*n = 0;
	while (rc == NSR_OK && cur.valid) {
		(*n)++;
		rc = mmdb_bt_next(&cur);
	}
	return rc;
}

/* mmdb_stats - counters; save set and volume counts walk their trees. */
int mmdb_stats(struct mmdb *db, struct mmdb_stats *st)
{
	struct mmdb_pager_stats ps;
	struct mmdb_view *v = NULL;
	int rc;

	memset(st, 0, sizeof(*st));
	mmdb_pager_stats(db->pager, &ps);
	st->commit_seq = ps.durable_seq;
	st->commits = ps.commits;
	st->fsyncs = ps.fsyncs;
	st->checkpoints = ps.checkpoints;
	st->pages = ps.npages;
	st->free_pages = ps.free_pages;
	st->file_bytes = ps.db_bytes + ps.wal_bytes;
	rc = read_view(db, &v);
	if (rc == NSR_OK)
		rc = count_tree(v, db->roots[T_SS], &st->savesets);
	if (rc == NSR_OK)
		rc = count_tree(v, db->roots[T_VOL], &st->volumes);
	mmdb_pager_read_end(v);
	return rc;
}
