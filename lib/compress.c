/*
 * compress.c: the codecs of record values, and the dictionaries trained
 * for them.
 *
 * The codec byte of a segment header (see segment.c) names the codec of
 * all the segment's values.  With codec none, values are stored as given.
 * With any other codec, every non-empty value starts with one tag byte:
 * 0 = the rest is the value as given, 1 = the rest is the codec's payload,
 * which decodes to the value (with the segment's dictionary, if its header
 * names one).  Empty values stay empty, so a tombstone is recognisable
 * without decoding.  A value is stored as given unless its payload is
 * shorter by an eighth: a tiny saving costs a decoding to read.
 *
 * The rest of the library sees codecs only through this file: a table of
 * codecs indexed by the codec byte (what settings, messages and segment
 * headers need to know of one), and an encoder and a decoder of values
 * (struct venc, struct vdec) that take a segment's header flags and keep
 * the codec's state and dictionary.  There is one codec, zstd, called
 * directly under ELOG_HAVE_ZSTD (set by the Makefile); a build without it
 * keeps it in the table, so that its segments are known and refused with a
 * clear error.  A second codec would be a CODEC_* byte, a TAG_* byte, its
 * entry in codecs[], a branch beside zstd's in each function below, its
 * ELOG_COMPRESS_* value (elog.h), its name in the settings file
 * (settings.c), the programs' options and the man pages.
 *
 * zstd: the payload is one zstd frame, less its 4-byte magic number.
 * Events are small, so every byte of a frame counts: the magic number is
 * implied by the tag, the frame omits the dictionary id (the segment header
 * names the dictionary) and carries no checksum (the record's CRC covers
 * it); it keeps its content size, which bounds the decompression.
 *
 * A dictionary lives in its own file, "dict.<id>" (elog(5), Compression).
 * Dictionaries are never deleted: segments written with one must stay
 * readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "os.h"
#include "compress.h"

#ifdef ELOG_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_FRAMEHEADERSIZE_MAX */
#include <zdict.h>
#include <zstd.h>
#define HAVE_ZSTD 1
#else
#define HAVE_ZSTD 0
#endif

/* ---- dictionary files ---- */

void elog__dict_name(char *buf, uint32_t id)
{
	snprintf(buf, NAME_MAX_LOCAL, "%s%u", DICT_PREFIX, id);
}

int elog__dict_store(int dfd, uint32_t id, const void *dict, size_t len)
{
	char name[NAME_MAX_LOCAL];
	unsigned char *buf = malloc(DICT_HDR + len);
	if (!buf)
		return ENOMEM;
	memcpy(buf, DICT_MAGIC, 8);
	put32(buf + 8, DICT_VERSION);
	put32(buf + 12, id);
	put32(buf + 16, (uint32_t)len);
	put32(buf + 20, elog__crc32c(0, dict, len));
	memcpy(buf + DICT_HDR, dict, len);
	elog__dict_name(name, id);
	int err = elog__fs_replace_file(dfd, name, buf, DICT_HDR + len);
	free(buf);
	return err;
}

int elog__dict_load(int dfd, uint32_t id, unsigned char **dict, size_t *len, char *msg)
{
	char name[NAME_MAX_LOCAL];
	char *data;
	size_t n;
	elog__dict_name(name, id);
	int err = elog__fs_read_small(dfd, name, DICT_HDR + DICT_MAX, &data, &n);
	if (err == ENOENT)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "%s: dictionary missing", name);
	if (err == EFBIG)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "%s: larger than %u bytes", name,
		                        DICT_HDR + DICT_MAX);
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	const unsigned char *p = (const unsigned char *)data;
	if (n < DICT_HDR || memcmp(p, DICT_MAGIC, 8) != 0 || get32(p + 8) != DICT_VERSION ||
	    get32(p + 12) != id || get32(p + 16) != n - DICT_HDR ||
	    get32(p + 20) != elog__crc32c(0, p + DICT_HDR, n - DICT_HDR)) {
		free(data);
		return elog__errmsg_set(msg, ELOG_CORRUPT, "%s: damaged dictionary", name);
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
		return 0; /* a temporary file or a stranger */
	if (v > *id)
		*id = (uint32_t)v;
	return 0;
}

int elog__dict_latest(int dfd, uint32_t *id)
{
	*id = 0;
	return elog__fs_dir_each(dfd, newer_dict, id);
}

/* ---- encoding and decoding values ---- */

struct venc {
	int level; /* for zstd: the settings' level, or 0 for its default */
#ifdef ELOG_HAVE_ZSTD
	ZSTD_CCtx *cctx;    /* made when first needed */
	ZSTD_CDict *cdict;  /* the dictionary it holds, */
	uint32_t zstd_dict; /* and its id, 0 = none */
#endif
	unsigned char *buf; /* the last value encoded */
	size_t cap;
};

struct vdec {
#ifdef ELOG_HAVE_ZSTD
	ZSTD_DCtx *dctx;      /* made when first needed */
	ZSTD_DDict *ddict;    /* the dictionary it holds, */
	uint32_t zstd_dict;   /* and its id, 0 = none */
	unsigned char *frame; /* the frame with its magic number restored */
	size_t fcap;
#endif
	unsigned char *buf; /* the last value decoded */
	size_t cap;
};

/* ---- zstd ---- */

#ifdef ELOG_HAVE_ZSTD

#define MAGIC_LEN 4
static const unsigned char zstd_magic[MAGIC_LEN] = { 0x28, 0xb5, 0x2f, 0xfd };

/* The payload of the n > 0 bytes at v, written at out (ZSTD_compressBound(n)
 * bytes), encoded with e's dictionary if with_dict: its length, or 0 when
 * the value does not encode (it is then stored as given). */
static size_t zstd_encode(struct venc *e, int with_dict, const void *v, size_t n,
                          unsigned char *out)
{
	/* The frame is written at out, then moved over its magic number. */
	ZSTD_CCtx_refCDict(e->cctx, with_dict ? e->cdict : NULL);
	size_t c = ZSTD_compress2(e->cctx, out, ZSTD_compressBound(n), v, n);
	if (ZSTD_isError(c) || c <= MAGIC_LEN || memcmp(out, zstd_magic, MAGIC_LEN) != 0)
		return 0;
	memmove(out, out + MAGIC_LEN, c - MAGIC_LEN);
	return c - MAGIC_LEN;
}

/* The length the n-byte payload at in states it decodes to, or SIZE_MAX
 * when it states none. */
static size_t zstd_dec_size(const unsigned char *in, size_t n)
{
	/* The frame header, its magic number restored, is all it takes. */
	unsigned char head[ZSTD_FRAMEHEADERSIZE_MAX];
	size_t h = n < sizeof head - MAGIC_LEN ? n : sizeof head - MAGIC_LEN;
	memcpy(head, zstd_magic, MAGIC_LEN);
	memcpy(head + MAGIC_LEN, in, h);
	unsigned long long size = ZSTD_getFrameContentSize(head, MAGIC_LEN + h);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size >= SIZE_MAX)
		return SIZE_MAX;
	return (size_t)size;
}

/* Decode the payload into d's buffer (more than zstd_dec_size()), with d's
 * dictionary if with_dict; *len is what it decoded to.  ELOG_CORRUPT with
 * *why, or ENOMEM. */
static int zstd_decode(struct vdec *d, int with_dict, const unsigned char *in, size_t n,
                       size_t *len, const char **why)
{
	size_t flen = MAGIC_LEN + n;
	if (elog__buf_grow(&d->frame, &d->fcap, flen, 4096))
		return ENOMEM;
	memcpy(d->frame, zstd_magic, MAGIC_LEN);
	memcpy(d->frame + MAGIC_LEN, in, n);
	size_t r = with_dict ? ZSTD_decompress_usingDDict(d->dctx, d->buf, d->cap, d->frame, flen,
	                                                  d->ddict)
	                     : ZSTD_decompressDCtx(d->dctx, d->buf, d->cap, d->frame, flen);
	if (ZSTD_isError(r)) {
		*why = ZSTD_getErrorName(r);
		return ELOG_CORRUPT;
	}
	*len = r;
	return 0;
}

#endif

/* ---- the codecs ---- */

/* Indexed by the codec byte.  Codec none stores values as given. */
static const struct codec codecs[] = {
	[CODEC_NONE] = { .name = "none",
	                 .id = CODEC_NONE,
	                 .compression = ELOG_COMPRESS_NONE,
	                 .built = 1 },
	[CODEC_ZSTD] = { .name = "zstd",
	                 .id = CODEC_ZSTD,
	                 .compression = ELOG_COMPRESS_ZSTD,
	                 .level_default = DEFAULT_ZSTD_LEVEL,
	                 .level_max = 19,
	                 .dictionaries = 1,
	                 .built = HAVE_ZSTD },
};
#define NCODECS (sizeof codecs / sizeof codecs[0])

int elog_have_zstd(void)
{
	return HAVE_ZSTD;
}

const struct codec *elog__codec_for_flags(uint32_t flags)
{
	return SEG_CODEC(flags) < NCODECS ? &codecs[SEG_CODEC(flags)] : NULL;
}

const struct codec *elog__codec_from_settings(const struct elog_settings *s)
{
	for (size_t i = 0; i < NCODECS; i++)
		if (codecs[i].compression == s->compression)
			return &codecs[i];
	return NULL;
}

int elog__codec_flags_valid(uint32_t flags)
{
	const struct codec *c = elog__codec_for_flags(flags);
	return c && (c->dictionaries || SEG_DICT(flags) == 0);
}

int elog__codec_plain(uint32_t flags)
{
	return SEG_CODEC(flags) == CODEC_NONE;
}

int elog__codec_usable(const struct codec *c, char *msg)
{
	if (!c->built)
		return elog__errmsg_set(msg, ELOG_UNSUPPORTED,
		                        "compressed with %s, but this "
		                        "build has no %s support",
		                        c->name, c->name);
	return 0;
}

int elog__codec_settings_check(struct elog_settings *s, char *msg)
{
	const struct codec *c = elog__codec_from_settings(s);
	if (!c)
		return elog__errmsg_set(msg, ELOG_INVALID, "unknown compression %d",
		                        s->compression);
	if (!c->level_max)
		s->compression_level = 0;
	else if (!s->compression_level)
		s->compression_level = c->level_default;
	if (!c->built)
		return elog__errmsg_set(msg, ELOG_UNSUPPORTED, "this build has no %s support",
		                        c->name);
	if (s->compression_level < 0 || s->compression_level > c->level_max)
		return elog__errmsg_set(msg, ELOG_INVALID, "%s level must be between 1 and %d",
		                        c->name, c->level_max);
	return 0;
}

int elog__codec_train(const struct codec *c, const void *samples, const size_t *sizes, unsigned n,
                      unsigned char *dict, size_t cap, size_t *len)
{
#ifdef ELOG_HAVE_ZSTD
	if (c->id == CODEC_ZSTD) {
		size_t r = ZDICT_trainFromBuffer(dict, cap, samples, sizes, n);
		if (ZDICT_isError(r))
			return ELOG_INVALID;
		*len = r;
		return 0;
	}
#else
	(void)samples, (void)sizes, (void)n, (void)dict, (void)cap, (void)len;
#endif
	(void)c;
	return ELOG_UNSUPPORTED;
}

size_t elog__codec_value_max(uint32_t flags, size_t n)
{
	return n && SEG_CODEC(flags) != CODEC_NONE ? n + 1 : n;
}

/* ---- the encoder and the decoder ---- */

struct venc *elog__venc_new(const struct codec *c, int level)
{
	struct venc *e = calloc(1, sizeof *e);
	if (e && c && c->id == CODEC_ZSTD)
		e->level = level;
	return e;
}

void elog__venc_free(struct venc *e)
{
	if (!e)
		return;
#ifdef ELOG_HAVE_ZSTD
	ZSTD_freeCDict(e->cdict);
	ZSTD_freeCCtx(e->cctx);
#endif
	free(e->buf);
	free(e);
}

/* 0 when flags name a codec this build has, else ELOG_CORRUPT (unknown)
 * or ELOG_UNSUPPORTED (not built in). */
static int codec_check(uint32_t flags, char *msg)
{
	const struct codec *c = elog__codec_for_flags(flags);
	if (!c)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "unknown codec %u", SEG_CODEC(flags));
	return elog__codec_usable(c, msg);
}

/* Make e's encoder for the codec of flags, and have it hold dictionary
 * SEG_DICT(flags) (when not 0): dict, or when dict is NULL, the one
 * loaded from dfd. */
static int enc_ready(struct venc *e, uint32_t flags, int dfd, const void *dict, size_t len,
                     char *msg)
{
	int err = codec_check(flags, msg);
	if (err || SEG_CODEC(flags) == CODEC_NONE)
		return err;
#ifdef ELOG_HAVE_ZSTD
	uint32_t id = SEG_DICT(flags);
	int level = e->level ? e->level : codecs[CODEC_ZSTD].level_default;
	if (!e->cctx) {
		if (!(e->cctx = ZSTD_createCCtx()))
			return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
		ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, level);
		ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_dictIDFlag, 0);
		ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 0);
		ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
	}
	if (id == 0 || (id == e->zstd_dict && !dict))
		return 0;
	unsigned char *loaded = NULL;
	if (!dict) {
		if ((err = elog__dict_load(dfd, id, &loaded, &len, msg)) != 0)
			return err;
		dict = loaded;
	}
	ZSTD_CDict *cd = ZSTD_createCDict(dict, len, level);
	free(loaded);
	if (!cd)
		return elog__errmsg_set(msg, ENOMEM, "dictionary %u: %s", id,
		                        elog_strerror(ENOMEM));
	ZSTD_freeCDict(e->cdict);
	e->cdict = cd;
	e->zstd_dict = id;
	return 0;
#else
	(void)e, (void)dfd, (void)dict, (void)len;
	return ELOG_UNSUPPORTED; /* codec_check() refused it */
#endif
}

int elog__venc_use_dict(struct venc *e, int dfd, uint32_t flags, char *msg)
{
	return enc_ready(e, flags, dfd, NULL, 0, msg);
}

int elog__venc_set_dict(struct venc *e, uint32_t flags, const void *dict, size_t len, char *msg)
{
	return enc_ready(e, flags, -1, dict, len, msg);
}

int elog__venc_value(struct venc *e, int dfd, uint32_t flags, const void *v, size_t n,
                     const void **out, size_t *outlen, char *msg)
{
	int err;
	if (SEG_CODEC(flags) == CODEC_NONE || n == 0) {
		*out = v;
		*outlen = n;
		return 0;
	}
	if ((err = enc_ready(e, flags, dfd, NULL, 0, msg)) != 0)
		return err;
#ifdef ELOG_HAVE_ZSTD
	if (elog__buf_grow(&e->buf, &e->cap, 1 + ZSTD_compressBound(n), 4096))
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	size_t len = zstd_encode(e, SEG_DICT(flags) != 0, v, n, e->buf + 1);
	if (len == 0 || len + n / 8 >= n) {
		e->buf[0] = TAG_RAW;
		memcpy(e->buf + 1, v, n);
		len = n;
	} else {
		e->buf[0] = TAG_ZSTD;
	}
	*out = e->buf;
	*outlen = 1 + len;
	return 0;
#else
	(void)out, (void)outlen;
	return ELOG_UNSUPPORTED; /* enc_ready() refused it */
#endif
}

struct vdec *elog__vdec_new(void)
{
	return calloc(1, sizeof(struct vdec));
}

void elog__vdec_free(struct vdec *d)
{
	if (!d)
		return;
#ifdef ELOG_HAVE_ZSTD
	ZSTD_freeDDict(d->ddict);
	ZSTD_freeDCtx(d->dctx);
	free(d->frame);
#endif
	free(d->buf);
	free(d);
}

int elog__vdec_value(struct vdec *d, int dfd, uint32_t flags, const void *in, size_t n,
                     const void **out, size_t *outlen, char *msg)
{
	const unsigned char *p = in;
	int err;
	if (!elog__codec_for_flags(flags))
		return elog__errmsg_set(msg, ELOG_CORRUPT, "unknown codec %u", SEG_CODEC(flags));
	if (SEG_CODEC(flags) == CODEC_NONE || n == 0) {
		*out = in;
		*outlen = n;
		return 0;
	}
	if (p[0] == TAG_RAW) {
		*out = p + 1;
		*outlen = n - 1;
		return 0;
	}
	if ((err = codec_check(flags, msg)) != 0)
		return err;
	if (p[0] != TAG_ZSTD)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "unknown value encoding %u", p[0]);
#ifdef ELOG_HAVE_ZSTD
	size_t size = zstd_dec_size(p + 1, n - 1);
	if (size == SIZE_MAX || size > ELOG_MAX_RECORD)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "bad zstd frame");
	if (!d->dctx && !(d->dctx = ZSTD_createDCtx()))
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	uint32_t id = SEG_DICT(flags);
	if (id && id != d->zstd_dict) {
		unsigned char *dict;
		size_t dlen;
		if ((err = elog__dict_load(dfd, id, &dict, &dlen, msg)) != 0)
			return err;
		ZSTD_DDict *dd = ZSTD_createDDict(dict, dlen);
		free(dict);
		if (!dd)
			return elog__errmsg_set(msg, ELOG_CORRUPT,
			                        "dictionary %u is not a zstd dictionary", id);
		ZSTD_freeDDict(d->ddict);
		d->ddict = dd;
		d->zstd_dict = id;
	}
	if (elog__buf_grow(&d->buf, &d->cap, size + 1, 4096))
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	const char *why = "wrong size";
	size_t len = 0;
	err = zstd_decode(d, id != 0, p + 1, n - 1, &len, &why);
	if (err == ENOMEM)
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	if (err || len != size)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "zstd frame does not decompress: %s",
		                        why);
	*out = d->buf;
	*outlen = len;
	return 0;
#else
	(void)d, (void)dfd, (void)out, (void)outlen;
	return ELOG_UNSUPPORTED; /* codec_check() refused it */
#endif
}
