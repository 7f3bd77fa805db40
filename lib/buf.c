/*
 * buf.c: arrays that grow by doubling: the tables of the library, the
 * writer's batches and the codecs' output.
 */
#include <errno.h>
#include <stdlib.h>

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
