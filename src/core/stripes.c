/*
 * stripes.c - striped locks (stripes.h).
 */
#include "nsr/compat.h"

#include "nsr/stripes.h"

/* nsr_stripes_init - see stripes.h. */
void nsr_stripes_init(struct nsr_stripes *s)
{
	for (int i = 0; i < NSR_STRIPES; i++)
		pthread_mutex_init(&s->mu[i], NULL);
}

/* nsr_stripe_of - see stripes.h. */
unsigned nsr_stripe_of(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h % NSR_STRIPES;
}

/* nsr_stripes_lock - see stripes.h. */
void nsr_stripes_lock(struct nsr_stripes *s, unsigned stripe)
{
	pthread_mutex_lock(&s->mu[stripe % NSR_STRIPES]);
}

/* nsr_stripes_unlock - see stripes.h. */
void nsr_stripes_unlock(struct nsr_stripes *s, unsigned stripe)
{
	pthread_mutex_unlock(&s->mu[stripe % NSR_STRIPES]);
}

/* nsr_stripe_set_add - see stripes.h. */
void nsr_stripe_set_add(nsr_stripe_set *set, unsigned stripe)
{
	*set |= (nsr_stripe_set)1 << (stripe % NSR_STRIPES);
}

/* nsr_stripes_lock_set - see stripes.h: lowest index first. */
void nsr_stripes_lock_set(struct nsr_stripes *s, nsr_stripe_set set)
{
	for (unsigned i = 0; i < NSR_STRIPES; i++)
		if (set & ((nsr_stripe_set)1 << i))
			pthread_mutex_lock(&s->mu[i]);
}

/* nsr_stripes_unlock_set - see stripes.h. */
void nsr_stripes_unlock_set(struct nsr_stripes *s, nsr_stripe_set set)
{
	for (unsigned i = NSR_STRIPES; i-- > 0;)
		if (set & ((nsr_stripe_set)1 << i))
			pthread_mutex_unlock(&s->mu[i]);
}
