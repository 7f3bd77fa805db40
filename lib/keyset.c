/*
 * keyset.c: the key table of compaction: for every distinct key, the offset
 * of its newest record and whether that record is a tombstone.
 *
 * Keys are not stored: a slot holds a 128-bit SipHash-2-4 of the key (one
 * bit of which marks the slot used, leaving 127) and the offset, 24 bytes
 * in all, whatever the key's length.  The SipHash key is drawn from
 * /dev/urandom for each table, so nobody can choose keys that collide; for
 * n distinct keys the chance that any two share a hash is below
 * n^2 / 2^128.  A collision would make compaction treat two keys as one.
 *
 * The table is split by the hash's top bits into KEYSET_SHARDS shards, each
 * its own open-addressing table with linear probing, grown by a quarter
 * when four fifths full.  A shard grows alone, so growing holds two copies
 * of one shard, never of the whole table: the peak stays within the 30 to
 * 38 bytes per key of the steady state (plus a shard's worth).  A large
 * shard is mapped on its own, so that what is freed goes back to the
 * system at once rather than staying in the heap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "os.h"
#include "maint.h"

struct keyslot {
	uint64_t h0, h1; /* h0 has its low bit set in a used slot */
	uint64_t word;   /* offset << 1 | tombstone */
};

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND \
	do { \
		v0 += v1; \
		v1 = ROTL(v1, 13); \
		v1 ^= v0; \
		v0 = ROTL(v0, 32); \
		v2 += v3; \
		v3 = ROTL(v3, 16); \
		v3 ^= v2; \
		v0 += v3; \
		v3 = ROTL(v3, 21); \
		v3 ^= v0; \
		v2 += v1; \
		v1 = ROTL(v1, 17); \
		v1 ^= v2; \
		v2 = ROTL(v2, 32); \
	} while (0)

/* SipHash-2-4 with its 128-bit output (Aumasson and Bernstein). */
void elog__siphash128(const void *data, size_t len, uint64_t k0, uint64_t k1, unsigned char out[16])
{
	const unsigned char *p = data, *end = p + (len & ~(size_t)7);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0;
	uint64_t v1 = 0x646f72616e646f6dull ^ k1 ^ 0xee;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0;
	uint64_t v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)len << 56;

	for (; p != end; p += 8) {
		uint64_t m = get64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < (len & 7); i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xee;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	put64(out, v0 ^ v1 ^ v2 ^ v3);
	v1 ^= 0xdd;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	put64(out + 8, v0 ^ v1 ^ v2 ^ v3);
}

/* Slot arrays of at least this many bytes are mapped, not malloc'ed. */
#define MAP_MIN (64u << 10)
#define SHARD_CAP0 16u /* slots of a new shard */

static struct keyslot *slots_new(size_t cap)
{
	size_t bytes = cap * sizeof(struct keyslot);
	if (bytes < MAP_MIN)
		return calloc(cap, sizeof(struct keyslot));
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void slots_free(struct keyslot *slot, size_t cap)
{
	size_t bytes = cap * sizeof(struct keyslot);
	if (!slot)
		return;
	if (bytes < MAP_MIN)
		free(slot);
	else
		munmap(slot, bytes);
}

int elog__keyset_init(struct keyset *ks)
{
	unsigned char raw[16];
	memset(ks, 0, sizeof *ks);
	int err = elog__fs_random(raw, sizeof raw);
	if (err)
		return err;
	ks->k0 = get64(raw);
	ks->k1 = get64(raw + 8);
	ks->shard = calloc(KEYSET_SHARDS, sizeof *ks->shard);
	if (!ks->shard)
		return ENOMEM;
	for (size_t i = 0; i < KEYSET_SHARDS; i++) {
		ks->shard[i].cap = SHARD_CAP0;
		if (!(ks->shard[i].slot = slots_new(SHARD_CAP0)))
			return ENOMEM;
		ks->cap += SHARD_CAP0;
	}
	return 0;
}

void elog__keyset_free(struct keyset *ks)
{
	if (ks->shard)
		for (size_t i = 0; i < KEYSET_SHARDS; i++)
			slots_free(ks->shard[i].slot, ks->shard[i].cap);
	free(ks->shard);
	memset(ks, 0, sizeof *ks);
}

size_t elog__keyset_memory(const struct keyset *ks)
{
	return ks->cap * sizeof(struct keyslot) + KEYSET_SHARDS * sizeof *ks->shard;
}

static void hash_key(const struct keyset *ks, const void *key, size_t len, uint64_t *h0,
                     uint64_t *h1)
{
	unsigned char h[16];
	elog__siphash128(key, len, ks->k0, ks->k1, h);
	*h0 = get64(h) | 1;
	*h1 = get64(h + 8);
}

/* The slot of (h0, h1), or the empty slot where it would go.  Any table
 * size works: the home slot is h1 scaled to [0, cap) by a multiply. */
static struct keyslot *probe(struct keyslot *slot, size_t cap, uint64_t h0, uint64_t h1)
{
	size_t i = (size_t)(((unsigned __int128)h1 * cap) >> 64);
	for (;;) {
		struct keyslot *s = &slot[i];
		if (s->h0 == 0 || (s->h0 == h0 && s->h1 == h1))
			return s;
		if (++i == cap)
			i = 0;
	}
}

/* Grown by a quarter when four fifths full: 30 to 38 bytes per key
 * (24-byte slots at 80% to 64% load), where doubling at three quarters
 * took 32 to 64. */
static int grow(struct keyset *ks, struct keyshard *sh)
{
	size_t cap = sh->cap + sh->cap / 4;
	struct keyslot *ns = slots_new(cap);
	if (!ns)
		return ENOMEM;
	for (size_t i = 0; i < sh->cap; i++)
		if (sh->slot[i].h0)
			*probe(ns, cap, sh->slot[i].h0, sh->slot[i].h1) = sh->slot[i];
	size_t held = (ks->cap + cap) * sizeof *ns; /* both copies of sh */
	if (held > ks->peak)
		ks->peak = held;
	slots_free(sh->slot, sh->cap);
	ks->cap += cap - sh->cap;
	sh->slot = ns;
	sh->cap = cap;
	return 0;
}

/* The shard of a hash: its top bits (the bottom one marks a used slot,
 * and the home slot in a shard comes from h1). */
static struct keyshard *shard_of(const struct keyset *ks, uint64_t h0)
{
	return &ks->shard[h0 >> (64 - KEYSET_SHARD_BITS)];
}

int elog__keyset_put(struct keyset *ks, const void *key, size_t len, uint64_t offset, int tombstone)
{
	uint64_t h0, h1;
	if (offset > UINT64_MAX >> 1)
		return ELOG_INVALID;
	hash_key(ks, key, len, &h0, &h1);
	struct keyshard *sh = shard_of(ks, h0);
	if ((sh->n + 1) * 5 > sh->cap * 4) {
		int err = grow(ks, sh);
		if (err)
			return err;
	}
	struct keyslot *s = probe(sh->slot, sh->cap, h0, h1);
	if (s->h0 == 0) {
		s->h0 = h0;
		s->h1 = h1;
		sh->n++;
		ks->n++;
	}
	s->word = offset << 1 | (tombstone ? 1 : 0);
	return 0;
}

int elog__keyset_get(const struct keyset *ks, const void *key, size_t len, uint64_t *offset,
                     int *tombstone)
{
	uint64_t h0, h1;
	hash_key(ks, key, len, &h0, &h1);
	const struct keyshard *sh = shard_of(ks, h0);
	const struct keyslot *s = probe(sh->slot, sh->cap, h0, h1);
	if (s->h0 == 0)
		return 0;
	*offset = s->word >> 1;
	*tombstone = (int)(s->word & 1);
	return 1;
}
