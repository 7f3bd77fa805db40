/*
 * compress.c: optional zstd compression of record values, with
 * dictionaries trained from the log's own records.
 *
 * In a segment whose header names the zstd codec, every non-empty value
 * starts with one tag byte: 0 = the rest is the value as given, 1 = the rest
 * is one zstd frame, less its 4-byte magic number, that decompresses to the
 * value (with the segment's dictionary, if its header names one).  Empty
 * values stay empty, so a tombstone is recognisable without decompressing.
 *
 * Events are small, so every byte of a frame counts: the magic number is
 * implied by the tag, the frame omits the dictionary id (the segment header
 * names the dictionary) and carries no checksum (the record's CRC covers
 * it); it keeps its content size, which bounds the decompression.
 *
 * A dictionary lives in its own file, "dict.<id>": a 24-byte header
 * (magic "ELOGDICT", version u32 = 1, id u32, length u32, crc32c u32 of the
 * dictionary bytes) followed by the dictionary.  Dictionaries are never
 * deleted: segments written with one must stay readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifdef ELOG_HAVE_ZSTD
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>
#endif

int elog_have_zstd(void)
{
#ifdef ELOG_HAVE_ZSTD
	return 1;
#else
	return 0;
#endif
}

void dict_name(char *buf, uint32_t id)
{
	snprintf(buf, NAME_MAX_LOCAL, "%s%u", DICT_PREFIX, id);
}

int dict_store(int dfd, uint32_t id, const void *dict, size_t len)
{
	char name[NAME_MAX_LOCAL];
	unsigned char *buf = malloc(DICT_HDR + len);
	if (!buf)
		return ENOMEM;
	memcpy(buf, DICT_MAGIC, 8);
	put32(buf + 8, DICT_VERSION);
	put32(buf + 12, id);
	put32(buf + 16, (uint32_t)len);
	put32(buf + 20, elog_crc32c(0, dict, len));
	memcpy(buf + DICT_HDR, dict, len);
	dict_name(name, id);
	int err = fs_replace_file(dfd, name, buf, DICT_HDR + len);
	free(buf);
	return err;
}

int dict_load(int dfd, uint32_t id, unsigned char **dict, size_t *len, char *msg)
{
	char name[NAME_MAX_LOCAL];
	char *data;
	size_t n;
	dict_name(name, id);
	int err = fs_read_small(dfd, name, DICT_HDR + DICT_MAX, &data, &n);
	if (err == ENOENT)
		return errmsg_set(msg, ELOG_CORRUPT, "%s: dictionary missing", name);
	if (err == EFBIG)
		return errmsg_set(msg, ELOG_CORRUPT, "%s: larger than %u bytes", name,
		                  DICT_HDR + DICT_MAX);
	if (err)
		return errmsg_set(msg, err, "%s: %s", name, strerror(err));
	const unsigned char *p = (const unsigned char *)data;
	if (n < DICT_HDR || memcmp(p, DICT_MAGIC, 8) != 0 || get32(p + 8) != DICT_VERSION ||
	    get32(p + 12) != id || get32(p + 16) != n - DICT_HDR ||
	    get32(p + 20) != elog_crc32c(0, p + DICT_HDR, n - DICT_HDR)) {
		free(data);
		return errmsg_set(msg, ELOG_CORRUPT, "%s: damaged dictionary", name);
	}
	memmove(data, data + DICT_HDR, n - DICT_HDR);
	*dict = (unsigned char *)data;
	*len = n - DICT_HDR;
	return 0;
}

static int newer_dict(const char *name, void *arg)
{
	uint32_t *id = arg;
	size_t plen = strlen(DICT_PREFIX);
	if (strncmp(name, DICT_PREFIX, plen) != 0)
		return 0;
	const char *s = name + plen;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '1' || *s > '9' || *end || errno || v > DICT_ID_MAX)
		return 0;	/* a temporary file or a stranger */
	if (v > *id)
		*id = (uint32_t)v;
	return 0;
}

int dict_latest(int dfd, uint32_t *id)
{
	*id = 0;
	return fs_dir_each(dfd, newer_dict, id);
}

#ifdef ELOG_HAVE_ZSTD

struct zenc {
	ZSTD_CCtx *cctx;
	ZSTD_CDict *cdict;
	uint32_t dict_id;
	int level;
};

struct zdec {
	ZSTD_DCtx *dctx;
	ZSTD_DDict *ddict;
	uint32_t dict_id;
	unsigned char *buf;	/* the decompressed value */
	size_t cap;
	unsigned char *frame;	/* the frame with its magic number restored */
	size_t fcap;
};

#define MAGIC_LEN 4

struct zenc *zenc_new(int level)
{
	struct zenc *z = calloc(1, sizeof *z);
	if (!z || !(z->cctx = ZSTD_createCCtx())) {
		free(z);
		return NULL;
	}
	z->level = level;
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_dictIDFlag, 0);
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0);
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1);
	return z;
}

void zenc_free(struct zenc *z)
{
	if (!z)
		return;
	ZSTD_freeCDict(z->cdict);
	ZSTD_freeCCtx(z->cctx);
	free(z);
}

int zenc_set_dict(struct zenc *z, uint32_t id, const void *dict, size_t len)
{
	ZSTD_CDict *cd = ZSTD_createCDict(dict, len, z->level);
	if (!cd)
		return ENOMEM;
	ZSTD_freeCDict(z->cdict);
	z->cdict = cd;
	z->dict_id = id;
	return 0;
}

size_t zenc_bound(size_t n)
{
	return 1 + ZSTD_compressBound(n);
}

static const unsigned char zstd_magic[MAGIC_LEN] = { 0x28, 0xb5, 0x2f, 0xfd };

size_t zenc_value(struct zenc *z, uint32_t dict_id, const void *v, size_t n,
                  unsigned char *out)
{
	/* The frame is written at out, then its magic number is overwritten
	 * by the tag: out[0..3] = magic, so the payload starts at out + 4. */
	ZSTD_CCtx_refCDict(z->cctx, dict_id && dict_id == z->dict_id ? z->cdict : NULL);
	size_t c = ZSTD_compress2(z->cctx, out, ZSTD_compressBound(n), v, n);
	/* Values that do not shrink by an eighth are stored as they are: a
	 * tiny frame saves a few bytes but costs a decompression to read. */
	if (ZSTD_isError(c) || c < MAGIC_LEN || memcmp(out, zstd_magic, MAGIC_LEN) != 0 ||
	    c - MAGIC_LEN + n / 8 >= n) {
		out[0] = TAG_RAW;
		memcpy(out + 1, v, n);
		return n + 1;
	}
	memmove(out + 1, out + MAGIC_LEN, c - MAGIC_LEN);
	out[0] = TAG_ZSTD;
	return 1 + c - MAGIC_LEN;
}

int zenc_train(const void *samples, const size_t *sizes, unsigned n,
               unsigned char *dict, size_t cap, size_t *len)
{
	size_t r = ZDICT_trainFromBuffer(dict, cap, samples, sizes, n);
	if (ZDICT_isError(r))
		return ELOG_INVALID;
	*len = r;
	return 0;
}

struct zdec *zdec_new(void)
{
	struct zdec *z = calloc(1, sizeof *z);
	if (!z || !(z->dctx = ZSTD_createDCtx())) {
		free(z);
		return NULL;
	}
	return z;
}

void zdec_free(struct zdec *z)
{
	if (!z)
		return;
	ZSTD_freeDDict(z->ddict);
	ZSTD_freeDCtx(z->dctx);
	free(z->buf);
	free(z->frame);
	free(z);
}

int zdec_value(struct zdec *z, int dfd, uint32_t dict_id, const unsigned char *in,
               size_t n, const void **out, size_t *outlen, char *msg)
{
	if (n == 0) {
		*out = in;
		*outlen = 0;
		return 0;
	}
	if (in[0] == TAG_RAW) {
		*out = in + 1;
		*outlen = n - 1;
		return 0;
	}
	if (in[0] != TAG_ZSTD)
		return errmsg_set(msg, ELOG_CORRUPT, "unknown value encoding %u", in[0]);
	size_t flen = MAGIC_LEN + n - 1;
	if (flen > z->fcap) {
		unsigned char *nf = realloc(z->frame, flen);
		if (!nf)
			return errmsg_set(msg, ENOMEM, "%s", strerror(ENOMEM));
		z->frame = nf;
		z->fcap = flen;
	}
	memcpy(z->frame, zstd_magic, MAGIC_LEN);
	memcpy(z->frame + MAGIC_LEN, in + 1, n - 1);
	unsigned long long size = ZSTD_getFrameContentSize(z->frame, flen);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
	    size > ELOG_MAX_RECORD)
		return errmsg_set(msg, ELOG_CORRUPT, "bad zstd frame");
	if (dict_id && dict_id != z->dict_id) {
		unsigned char *d;
		size_t dlen;
		int err = dict_load(dfd, dict_id, &d, &dlen, msg);
		if (err)
			return err;
		ZSTD_DDict *dd = ZSTD_createDDict(d, dlen);
		free(d);
		if (!dd)
			return errmsg_set(msg, ELOG_CORRUPT, "dictionary %u is not a zstd dictionary",
			                  dict_id);
		ZSTD_freeDDict(z->ddict);
		z->ddict = dd;
		z->dict_id = dict_id;
	}
	if (size + 1 > z->cap) {
		unsigned char *nb = realloc(z->buf, size + 1);
		if (!nb)
			return errmsg_set(msg, ENOMEM, "%s", strerror(ENOMEM));
		z->buf = nb;
		z->cap = size + 1;
	}
	size_t r = dict_id
	    ? ZSTD_decompress_usingDDict(z->dctx, z->buf, z->cap, z->frame, flen, z->ddict)
	    : ZSTD_decompressDCtx(z->dctx, z->buf, z->cap, z->frame, flen);
	if (ZSTD_isError(r) || r != size)
		return errmsg_set(msg, ELOG_CORRUPT, "zstd frame does not decompress: %s",
		                  ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong size");
	*out = z->buf;
	*outlen = r;
	return 0;
}

#else /* no zstd in this build */

struct zenc *zenc_new(int level) { (void)level; return NULL; }
void zenc_free(struct zenc *z) { (void)z; }
int zenc_set_dict(struct zenc *z, uint32_t id, const void *dict, size_t len)
{ (void)z; (void)id; (void)dict; (void)len; return ELOG_UNSUPPORTED; }
size_t zenc_bound(size_t n) { return n + 1; }
size_t zenc_value(struct zenc *z, uint32_t dict_id, const void *v, size_t n,
                  unsigned char *out)
{ (void)z; (void)dict_id; out[0] = TAG_RAW; memcpy(out + 1, v, n); return n + 1; }
int zenc_train(const void *samples, const size_t *sizes, unsigned n,
               unsigned char *dict, size_t cap, size_t *len)
{ (void)samples; (void)sizes; (void)n; (void)dict; (void)cap; (void)len; return ELOG_UNSUPPORTED; }
struct zdec *zdec_new(void) { return NULL; }
void zdec_free(struct zdec *z) { (void)z; }
int zdec_value(struct zdec *z, int dfd, uint32_t dict_id, const unsigned char *in,
               size_t n, const void **out, size_t *outlen, char *msg)
{
	(void)z; (void)dfd; (void)dict_id;
	if (n == 0 || in[0] == TAG_RAW) {
		*out = n ? in + 1 : in;
		*outlen = n ? n - 1 : 0;
		return 0;
	}
	return errmsg_set(msg, ELOG_UNSUPPORTED,
	    "compressed with zstd, but this build has no zstd support");
}

#endif
