/*
 * rstmap.c - open-addressing string map used by restore (restore_int.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/fnv.h"

#include "restore_int.h"

/* hash - FNV-1a of a string. */
static size_t hash(const char *s)
{
	return (size_t)nsr_fnv1a_str(s);
}

/* rst_map_init - set up an empty map. */
void rst_map_init(struct rst_map *m)
{
	memset(m, 0, sizeof(*m));
}

/* rst_map_release - free the map and its strings. */
void rst_map_release(struct rst_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->slots[i].key);
		free(m->slots[i].val);
	}
	free(m->slots);
	rst_map_init(m);
}

/* find - the slot of key, or the empty slot where it would go. */
static struct rst_map_slot *find(const struct rst_map *m, const char *key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->slots[i].key != NULL && strcmp(m->slots[i].key, key) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

/* grow - double the table. */
static int grow(struct rst_map *m)
{
	struct rst_map old = *m;
	size_t ncap = m->cap ? m->cap * 2 : 64;

	m->slots = calloc(ncap, sizeof(*m->slots));
	if (m->slots == NULL) {
		*m = old;
		return NSR_ERR_NOMEM;
	}
	m->cap = ncap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key != NULL)
			*find(m, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return NSR_OK;
}

/* rst_map_put - set key to a copy of val. */
int rst_map_put(struct rst_map *m, const char *key, const char *val)
{
	struct rst_map_slot *s;
	char *v;

	if ((m->used + 1) * 2 > m->cap && grow(m) != NSR_OK)
		return NSR_ERR_NOMEM;
	s = find(m, key);
	v = strdup(val);
	if (v == NULL)
		return NSR_ERR_NOMEM;
	if (s->key == NULL) {
		s->key = strdup(key);
		if (s->key == NULL) {
			free(v);
			return NSR_ERR_NOMEM;
		}
		m->used++;
	}
	free(s->val);
	s->val = v;
	return NSR_OK;
}

/* rst_map_get - look key up. */
const char *rst_map_get(const struct rst_map *m, const char *key)
{
	const struct rst_map_slot *s;

	if (m->cap == 0)
		return NULL;
	s = find(m, key);
	return s->key ? s->val : NULL;
}
