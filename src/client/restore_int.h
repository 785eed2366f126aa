/*
 * restore_int.h - a small string -> string map private to the client
 * library (restore: saved path -> restored target of hard-link sources).
 */
#ifndef NSR_RESTORE_INT_H
#define NSR_RESTORE_INT_H

#include <stddef.h>

struct rst_map_slot {
	char *key, *val;
};

struct rst_map {
	struct rst_map_slot *slots;
	size_t cap, used;
};

/* rst_map_init - an empty map. */
void rst_map_init(struct rst_map *m);
/* rst_map_release - free all keys, values and slots. */
void rst_map_release(struct rst_map *m);
/* rst_map_put - set key -> val (both copied).  NSR_OK, NSR_ERR_NOMEM. */
int rst_map_put(struct rst_map *m, const char *key, const char *val);
/* rst_map_get - the value for key or NULL. */
const char *rst_map_get(const struct rst_map *m, const char *key);

#endif /* NSR_RESTORE_INT_H */
