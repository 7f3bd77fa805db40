/*
 * buf.c: arrays that grow by doubling: the tables of the library, the
 * writer's batches, the codecs' output and the lists of ranges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

void *elog__grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : first;
	while (c < need)
		c *= 2;
	void *np = c > SIZE_MAX / size ? NULL : realloc(p, c * size);
	if (np)
		*cap = c;
	return np;
}

int elog__buf_grow(unsigned char **p, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	unsigned char *np = elog__grow(*p, cap, need, 1, first);
	if (!np)
		return ENOMEM;
	*p = np;
	return 0;
}

int elog__array_push(void *arrayp, size_t *n, size_t size, const void *x)
{
	void *v;
	/* The array's pointer is read and written as bytes: it may point to
	 * any type. */
	memcpy(&v, arrayp, sizeof v);
	/* Grow at powers of two: n is the only bookkeeping needed. */
	if ((*n & (*n - 1)) == 0) {
		void *nv = realloc(v, (*n ? 2 * *n : 1) * size);
		if (!nv)
			return ENOMEM;
		v = nv;
		memcpy(arrayp, &v, sizeof v);
	}
	memcpy((unsigned char *)v + *n * size, x, size);
	(*n)++;
	return 0;
}
