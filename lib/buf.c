/*
 * buf.c: byte buffers that grow by doubling, for the writer's batches and
 * the codecs' output.
 */
#include <errno.h>
#include <stdlib.h>

#include "base.h"

int elog__buf_grow(unsigned char **p, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : first;
	while (c < need)
		c *= 2;
	unsigned char *np = realloc(*p, c);
	if (!np)
		return ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}
