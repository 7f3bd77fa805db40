/*
 * lockstate.c: the one encoder and decoder of each text LOCK holds: the
 * state of the log's tail, the sync records and the doorbell's record
 * (format.h gives where each lies, elog(5) every byte).  Pure code over
 * bytes in memory; lock.c reads and writes them.
 */
#include <stddef.h>
#include <string.h>

#include "base.h"
#include "format.h"
#include "encoding.h"

/*
 * Every field has a fixed width, so the texts are written and read by
 * hand, at fixed positions: a state is read several times per
 * acknowledgement, and printf and scanf cost more than everything else a
 * writer does between its system calls.
 */
static char *put_text(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_dec(char *p, uint64_t v, int width)
{
	for (int i = width - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + width;
}

static char *put_hex(char *p, uint64_t v, int width)
{
	for (int i = width - 1; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
	return p + width;
}

/* A sign and 19 digits, as printf's %+020lld. */
static char *put_signed(char *p, int64_t v)
{
	*p++ = v < 0 ? '-' : '+';
	return put_dec(p, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 19);
}

/* The field of width digits at p (decimal, or hex when hex); 0, or -1 on
 * any other character. */
static int get_num(const char *p, int width, int hex, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < width; i++) {
		char c = p[i];
		if (c >= '0' && c <= '9')
			x = x * (hex ? 16 : 10) + (uint64_t)(c - '0');
		else if (hex && c >= 'a' && c <= 'f')
			x = x * 16 + (uint64_t)(c - 'a' + 10);
		else
			return -1;
	}
	*v = x;
	return 0;
}

/* The fields of a text, in their order: the name before each (" gen="),
 * its kind and number of characters, and the member of the structure
 * that holds it.  The one description of a text's layout: the encoder
 * walks it, and so does the decoder. */
enum { K_DEC, K_HEX, K_FLAG, K_SIGNED, K_BOOT, K_CHAR };
struct field {
	const char *name;
	unsigned char nlen, kind, width, size;
	unsigned short at;
};
#define FIELD(T, m, name, kind, w) \
	{ name, sizeof name - 1, kind, w, sizeof(((T *)0)->m), offsetof(T, m) }
/* A text: its magic, its fields and its length. */
struct text {
	const char *magic;
	const struct field *f;
	size_t n, len;
};
#define TEXT(magic, fields, len) { magic, fields, sizeof fields / sizeof *fields, len }

/* A member of 8 bytes, or of 4 (unsigned, uint32_t). */
static uint64_t member_get(const void *s, const struct field *f)
{
	const char *m = (const char *)s + f->at;
	return f->size == 8 ? *(const uint64_t *)m : *(const uint32_t *)m;
}

static void member_set(void *s, const struct field *f, uint64_t v)
{
	char *m = (char *)s + f->at;
	if (f->size == 8)
		*(uint64_t *)m = v;
	else
		*(uint32_t *)m = (uint32_t)v;
}

/* The magic, then the fields of s, then " crc=", the crc of all before
 * and a newline (and a NUL after it). */
static void text_encode(char *p, const struct text *t, const void *s)
{
	char *q = put_text(p, t->magic);
	const struct field *f = t->f;
	for (size_t i = 0; i < t->n; i++, f++) {
		const unsigned char *m = (const unsigned char *)s + f->at;
		memcpy(q, f->name, f->nlen);
		q += f->nlen;
		if (f->kind == K_BOOT) {
			for (int j = 0; j < 16; j++)
				q = put_hex(q, m[j], 2);
		} else if (f->kind == K_CHAR) {
			*q++ = (char)m[0];
		} else if (f->kind == K_SIGNED) {
			q = put_signed(q, (int64_t)member_get(s, f));
		} else {
			uint64_t v = member_get(s, f);
			v = f->kind == K_FLAG ? v != 0 : v;
			q = (f->kind == K_HEX ? put_hex : put_dec)(q, v, f->width);
		}
	}
	q = put_text(q, " crc=");
	q = put_hex(q, elog__crc32c(0, p, (size_t)(q - p)), 8);
	q[0] = '\n';
	q[1] = '\0';
}

/* The fields are read at their positions, then s is encoded again and
 * must give the same t->len bytes: one canonical text per value, so that
 * no reading of a damaged file can pass for another (the crc, a digit out
 * of range, a wrong name or space all differ).  s is cleared when not. */
static int text_decode(const char *p, size_t len, const struct text *t, void *s, size_t size)
{
	char again[LOCK_STATE_LEN + 1]; /* the longest text */
	const char *q = p + strlen(t->magic);
	const struct field *f = t->f;
	uint64_t v;
	int bad = len < t->len;
	memset(s, 0, size);
	for (size_t i = 0; i < t->n && !bad; i++) {
		unsigned char *m = (unsigned char *)s + f[i].at;
		q += f[i].nlen;
		if (f[i].kind == K_BOOT) {
			for (int j = 0; j < 16 && !bad; j++) {
				bad = get_num(q + 2 * j, 2, 1, &v) != 0;
				m[j] = (unsigned char)v;
			}
			q += 32;
			continue;
		}
		if (f[i].kind == K_CHAR) {
			m[0] = (unsigned char)*q;
		} else if (f[i].kind == K_SIGNED) {
			bad = (*q != '+' && *q != '-') ||
			      get_num(q + 1, f[i].width - 1, 0, &v) != 0;
			member_set(s, &f[i], *q == '-' ? (uint64_t)0 - v : v);
		} else {
			bad = get_num(q, f[i].width, f[i].kind == K_HEX, &v) != 0;
			member_set(s, &f[i], v);
		}
		q += f[i].width;
	}
	if (!bad) {
		text_encode(again, t, s);
		bad = memcmp(again, p, t->len) != 0;
	}
	if (bad)
		memset(s, 0, size);
	return bad ? ELOG_CORRUPT : 0;
}

/* LOCK_STATE_LEN bytes of text, one line; elog(5) gives every byte. */
#define LS(member, name, kind, width) FIELD(struct lock_state, member, name, kind, width)
static const struct field state_fields[] = {
	LS(epoch, " epoch=", K_HEX, 16),  LS(gen, " gen=", K_DEC, 20),
	LS(busy, " busy=", K_FLAG, 1),    LS(sick, " sick=", K_FLAG, 1),
	LS(pid, " pid=", K_DEC, 10),      LS(boot, " boot=", K_BOOT, 32),
	LS(next, " next=", K_DEC, 20),    LS(base, " base=", K_DEC, 20),
	LS(size, " size=", K_DEC, 20),    LS(flags, " flags=", K_HEX, 8),
	LS(idx, " idx=", K_DEC, 20),      LS(ixpos, " ixpos=", K_DEC, 20),
	LS(ixts, " ixts=", K_SIGNED, 20), LS(ixmin, " ixmin=", K_SIGNED, 20),
	LS(ixlo, " ixlo=", K_SIGNED, 20), LS(ixhi, " ixhi=", K_SIGNED, 20),
	LS(ixany, " ixany=", K_FLAG, 1),  LS(hseq, " hseq=", K_DEC, 20),
};
static const struct text state_text = TEXT("ELOGLCK3", state_fields, LOCK_STATE_LEN);

void elog__lock_state_encode(char *p, const struct lock_state *ls)
{
	text_encode(p, &state_text, ls);
}

int elog__lock_state_decode(const char *p, size_t len, struct lock_state *ls)
{
	int err = text_decode(p, len, &state_text, ls, sizeof *ls);
	ls->valid = !err;
	return err;
}

/* "ELOGSYN1 st=S seq=<20> pid=<10> boot=<32 hex> t=<20> cover=<20>
 * crc=<8 hex>\n": LOCK_SYNC_LEN bytes. */
#define SR(member, name, kind, width) FIELD(struct sync_rec, member, name, kind, width)
static const struct field sync_fields[] = {
	SR(status, " st=", K_CHAR, 1), SR(seq, " seq=", K_DEC, 20),
	SR(pid, " pid=", K_DEC, 10),   SR(boot, " boot=", K_BOOT, 32),
	SR(t_ns, " t=", K_DEC, 20),    SR(cover, " cover=", K_DEC, 20),
};
static const struct text sync_text = TEXT("ELOGSYN1", sync_fields, LOCK_SYNC_LEN);

void elog__sync_rec_encode(char *p, const struct sync_rec *r)
{
	text_encode(p, &sync_text, r);
}

int elog__sync_rec_decode(const char *p, size_t len, struct sync_rec *r)
{
	static const char states[] = { SYNC_ST_PENDING, SYNC_ST_OK, SYNC_ST_FAILED,
		                       SYNC_ST_HANDLED };
	if (text_decode(p, len, &sync_text, r, sizeof *r) != 0 ||
	    !memchr(states, r->status, sizeof states)) {
		memset(r, 0, sizeof *r);
		return ELOG_CORRUPT;
	}
	r->valid = 1;
	return 0;
}

/* "ELOGBEL1 id=<10> nonce=<16 hex> crc=<8 hex>\n": LOCK_BELL_LEN bytes. */
struct bell_rec {
	uint32_t id;
	uint64_t nonce;
};
static const struct field bell_fields[] = {
	FIELD(struct bell_rec, id, " id=", K_DEC, 10),
	FIELD(struct bell_rec, nonce, " nonce=", K_HEX, 16),
};
static const struct text bell_text = TEXT("ELOGBEL1", bell_fields, LOCK_BELL_LEN);

void elog__bell_rec_encode(char *p, uint32_t id, uint64_t nonce)
{
	struct bell_rec b = { id, nonce };
	text_encode(p, &bell_text, &b);
}

int elog__bell_rec_decode(const char *p, size_t len, uint32_t *id, uint64_t *nonce)
{
	struct bell_rec b;
	if (text_decode(p, len, &bell_text, &b, sizeof b) != 0)
		return ELOG_CORRUPT;
	*id = b.id;
	*nonce = b.nonce;
	return 0;
}
