/*
 * compress.h: the codecs of record values (zstd), the dictionaries trained
 * for them, and the encoder and decoder of values that the writer, readers
 * and compaction use.  Its tags and files are in format.h.
 */
#ifndef ELOG_COMPRESS_H
#define ELOG_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* Codecs, tags and dictionary files: see format.h. */
void elog__dict_name(char *buf, uint32_t id);
int elog__dict_store(int dfd, uint32_t id, const void *dict, size_t len);
int elog__dict_load(int dfd, uint32_t id, unsigned char **dict, size_t *len, char *msg);
/* The highest dictionary id in dfd, 0 when there is none. */
int elog__dict_latest(int dfd, uint32_t *id);
/* A codec of record values: what the rest of the library may know of it.
 * Its functions are compress.c's own. */
struct codec {
	const char *name;  /* in settings and messages: "zstd" */
	unsigned id;       /* the codec byte of segment headers */
	int compression;   /* its elog_settings.compression value */
	int level_default; /* levels run from 1 to level_max; */
	int level_max;     /* 0 = the codec has no levels */
	int dictionaries;  /* it trains them, and its segments name them */
	int built;         /* this build encodes and decodes its values */
};
/* The codec a segment header's flags name; NULL when unknown. */
const struct codec *elog__codec_for_flags(uint32_t flags);
/* The codec of the segments a writer starts under s; NULL when unknown. */
const struct codec *elog__codec_from_settings(const struct elog_settings *s);
/* 1 when flags name a known codec, and a dictionary only if it has them. */
int elog__codec_flags_valid(uint32_t flags);
/* 1 when the values of a segment with these flags are stored as given
 * (no codec): a reader need not decode them. */
int elog__codec_plain(uint32_t flags);
/* 0 when this build can encode and decode c's values, else
 * ELOG_UNSUPPORTED with "compressed with <c>, but this build has no <c>
 * support". */
int elog__codec_usable(const struct codec *c, char *msg);
/* Check s's compression and its level, and complete the level (0 = the
 * codec's default).  ELOG_INVALID, ELOG_UNSUPPORTED. */
int elog__codec_settings_check(struct elog_settings *s, char *msg);
/* Train a dictionary of at most cap bytes for c from n samples laid end to
 * end (sizes[i] bytes each); ELOG_UNSUPPORTED when c has none. */
int elog__codec_train(const struct codec *c, const void *samples, const size_t *sizes, unsigned n,
                      unsigned char *dict, size_t cap, size_t *len);
/* The most bytes a value of n bytes takes in a segment with these flags. */
size_t elog__codec_value_max(uint32_t flags, size_t n);
struct venc;
struct vdec;
/* A value encoder for segments of any codec, which keeps per codec its
 * state and dictionary; level is for codec c (the settings'), the others
 * get their default level.  NULL when out of memory. */
struct venc *elog__venc_new(const struct codec *c, int level);
void elog__venc_free(struct venc *e);
/* Make e hold the dictionary flags name, loaded from dfd. */
int elog__venc_use_dict(struct venc *e, int dfd, uint32_t flags, char *msg);
/* Make e hold dict as the dictionary flags name. */
int elog__venc_set_dict(struct venc *e, uint32_t flags, const void *dict, size_t len, char *msg);
/* The value of n bytes at v as stored in a segment with these flags: v
 * itself in an uncompressed segment, else tag byte and payload in e's
 * buffer, valid until the next call.  ELOG_UNSUPPORTED (the codec is not
 * in this build), a dictionary's errors, ENOMEM. */
int elog__venc_value(struct venc *e, int dfd, uint32_t flags, const void *v, size_t n,
                     const void **out, size_t *outlen, char *msg);
/* A value decoder for segments of any codec.  NULL when out of memory. */
struct vdec *elog__vdec_new(void);
void elog__vdec_free(struct vdec *d);
/* The value stored as the n bytes at in, in a segment with these flags:
 * in itself, the bytes after a raw tag, or the payload decoded into d's
 * buffer, valid until the next call.  ELOG_CORRUPT, ELOG_UNSUPPORTED (the
 * codec is not in this build), ENOMEM. */
int elog__vdec_value(struct vdec *d, int dfd, uint32_t flags, const void *in, size_t n,
                     const void **out, size_t *outlen, char *msg);

#endif
