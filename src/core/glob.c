/*
 * glob.c - whether two wildcard patterns have a string in common
 * (glob.h).  Each pattern becomes a list of tokens, a star or a set of
 * bytes; a depth-first search over pairs of positions, each visited
 * once, looks for a way through both to their ends: a star stays where
 * it is while it takes the byte the other pattern's token takes, or is
 * passed over; two sets move on together when they share a byte.
 */
#include "nsr/compat.h"

#include <ctype.h>

#include "nsr/glob.h"

#define GLOB_WORK_MAX (4u << 20) /* pairs of positions searched, at most */

/* One token: a star, or the set of bytes it matches (bit per byte). */
struct tok {
	int star;
	uint8_t set[32];
};

/* set_add - byte c in the set. */
static void set_add(struct tok *t, unsigned c)
{
	t->set[c / 8] |= (uint8_t)(1u << (c % 8));
}

/* set_range - bytes lo..hi in the set. */
static void set_range(struct tok *t, unsigned lo, unsigned hi)
{
	for (unsigned c = lo; c <= hi && c < 256; c++)
		set_add(t, c);
}

/* set_class - the bytes of a [:name:] class; 0 for an unknown name. */
static int set_class(struct tok *t, const char *name, size_t len)
{
	static const struct {
		const char *name;
		int (*is)(int);
	} cl[] = {
		{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank},
		{"cntrl", iscntrl}, {"digit", isdigit}, {"graph", isgraph},
		{"lower", islower}, {"print", isprint}, {"punct", ispunct},
		{"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
	};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(cl); i++)
		if (strlen(cl[i].name) == len &&
		    memcmp(cl[i].name, name, len) == 0) {
			for (unsigned c = 1; c < 128; c++)
				if (cl[i].is((int)c))
					set_add(t, c);
			return 1;
		}
	return 0;
}

/* bracket - the set of "[...]" at p (p[0] == '['), as fnmatch reads it;
 * the bytes it takes, or 0 when there is no closing ']' (then the '['
 * is itself).  *loose is set by a '[' inside the set that is not a known
 * class, "[=c=]" or "[.c.]": glibc's reading of those varies, so the
 * pattern's answer is then 1. */
static size_t bracket(const char *p, struct tok *t, int *loose)
{
	size_t i = 1;
	int neg = 0, first = 1;

	memset(t, 0, sizeof(*t));
	if (p[i] == '!' || p[i] == '^') {
		neg = 1;
		i++;
	}
	for (;; first = 0) {
		unsigned lo;

		if (p[i] == '\0')
			return 0;
		if (p[i] == ']' && !first)
			break;
		if (p[i] == '[' && p[i + 1] == ':') {
			/* glibc: a class name is of 'a'..'y'; anything
			 * else makes the '[' an ordinary member */
			size_t k = i + 2;

			while (p[k] >= 'a' && p[k] < 'z')
				k++;
			if (p[k] == ':' && p[k + 1] == ']' &&
			    set_class(t, p + i + 2, k - (i + 2))) {
				i = k + 2;
				continue;
			}
		} else if (p[i] == '[' &&
			   (p[i + 1] == '=' || p[i + 1] == '.') &&
			   p[i + 2] != '\0' && p[i + 3] == p[i + 1] &&
			   p[i + 4] == ']') {
			/* "[=c=]" or the collating symbol "[.c.]": one
			 * byte in the C locale */
			set_add(t, (unsigned char)p[i + 2]);
			i += 5;
			continue;
		}
		/* Any other '[' in a set (an unknown class, a longer or
		 * malformed symbol): glibc's reading varies, so it is taken
		 * as any byte (an overlap said rather than missed). */
		if (p[i] == '[')
			*loose = 1;
		if (p[i] == '\\' && p[i + 1] != '\0')
			i++;
		lo = (unsigned char)p[i++];
		if (p[i] == '-' && p[i + 1] != ']' && p[i + 1] != '\0') {
			unsigned hi;

			i++;
			if (p[i] == '[')
				*loose = 1; /* a range to a symbol */
			if (p[i] == '\\' && p[i + 1] != '\0')
				i++;
			hi = (unsigned char)p[i++];
			set_range(t, lo, hi);
		} else {
			set_add(t, lo);
		}
	}
	if (neg)
		for (size_t k = 0; k < sizeof(t->set); k++)
			t->set[k] = (uint8_t)~t->set[k];
	t->set[0] &= (uint8_t)~1u; /* no NUL in a string */
	return i + 1;
}

/* tokens - p as tokens into v (strlen(p) of them at most); the count.
 * *never is set when fnmatch matches nothing with p (a trailing
 * backslash), *loose as bracket says. */
static size_t tokens(const char *p, struct tok *v, int *never, int *loose)
{
	size_t n = 0;

	while (*p) {
		struct tok *t = &v[n++];
		size_t used;

		memset(t, 0, sizeof(*t));
		if (*p == '*') {
			t->star = 1;
			while (*p == '*') /* one star is as good as several */
				p++;
			continue;
		}
		if (*p == '?') {
			set_range(t, 1, 255);
			p++;
			continue;
		}
		if (*p == '[' && (used = bracket(p, t, loose)) > 0) {
			p += used;
			continue;
		}
		if (*p == '\\' && p[1] == '\0')
			*never = 1; /* "trailing \\ loses" */
		if (*p == '\\' && p[1] != '\0')
			p++;
		memset(t, 0, sizeof(*t)); /* an unclosed "[" left bits */
		set_add(t, (unsigned char)*p++);
	}
	return n;
}

/* meet - do the sets of x and y share a byte? */
static int meet(const struct tok *x, const struct tok *y)
{
	for (size_t k = 0; k < sizeof(x->set); k++)
		if (x->set[k] & y->set[k])
			return 1;
	return 0;
}

/* nonempty - does a set token take some byte? */
static int nonempty(const struct tok *x)
{
	for (size_t k = 0; k < sizeof(x->set); k++)
		if (x->set[k])
			return 1;
	return 0;
}

/* The search: pairs (i, j) of positions in a (n tokens) and b (m). */
struct search {
	const struct tok *a, *b;
	size_t n, m;
	uint8_t *seen; /* (n + 1) x (m + 1), 1 once visited */
	size_t *stack; /* pairs to visit, i * (m + 1) + j */
	size_t top;
};

/* push - visit pair (i, j) later, once. */
static void push(struct search *s, size_t i, size_t j)
{
	size_t k = i * (s->m + 1) + j;

	if (!s->seen[k]) {
		s->seen[k] = 1;
		s->stack[s->top++] = k;
	}
}

/* nsr_glob_overlap - see glob.h. */
int nsr_glob_overlap(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	struct search s;
	int found = 0, never = 0, loose = 0;

	memset(&s, 0, sizeof(s));
	if ((la + 1) * (lb + 1) > GLOB_WORK_MAX)
		return 1;
	s.a = calloc(la + 1, sizeof(struct tok));
	s.b = calloc(lb + 1, sizeof(struct tok));
	s.seen = calloc((la + 1) * (lb + 1), 1);
	s.stack = calloc((la + 1) * (lb + 1), sizeof(size_t));
	if (!s.a || !s.b || !s.seen || !s.stack) {
		found = 1; /* out of memory: err towards an overlap */
		goto out;
	}
	s.n = tokens(a, (struct tok *)s.a, &never, &loose);
	s.m = tokens(b, (struct tok *)s.b, &never, &loose);
	if (loose && !never)
		found = 1; /* glob.h: errs towards 1 */
	else if (!never)
		push(&s, 0, 0);
	while (s.top > 0 && !found) {
		size_t k = s.stack[--s.top];
		size_t i = k / (s.m + 1), j = k % (s.m + 1);
		const struct tok *x = i < s.n ? &s.a[i] : NULL;
		const struct tok *y = j < s.m ? &s.b[j] : NULL;

		if (!x && !y) {
			found = 1;
		} else if (x && x->star) {
			push(&s, i + 1, j); /* the star takes nothing more */
			if (y && (y->star || nonempty(y)))
				push(&s, i, j + 1); /* it takes y's byte */
		} else if (y && y->star) {
			push(&s, i, j + 1);
			if (x && nonempty(x))
				push(&s, i + 1, j);
		} else if (x && y && meet(x, y)) {
			push(&s, i + 1, j + 1);
		}
	}
out:
	free((void *)s.a);
	free((void *)s.b);
	free(s.seen);
	free(s.stack);
	return found;
}
