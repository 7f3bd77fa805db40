/*
 * lockstate.c: the one encoder and decoder of each text LOCK holds: the
 * state of the log's tail, the sync records and the doorbell's record
 * (format.h gives where each lies, elog(5) every byte).  Pure code over
 * bytes in memory; lock.c reads and writes them.
 */
#include <string.h>

#include "base.h"
#include "format.h"
#include "encoding.h"

/*
 * LOCK_STATE_LEN bytes of text, one line; elog(5) gives every byte.  Every
 * field has a fixed width, so the text is written and read by hand, at
 * fixed positions: a state is read several times per acknowledgement, and
 * printf and scanf cost more than everything else a writer does between
 * its system calls.
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

static char *put_boot(char *q, const unsigned char boot[16]);
static int get_boot(const char *p, unsigned char boot[16]);

void elog__lock_state_encode(char *p, const struct lock_state *ls)
{
	char *q = put_text(p, "ELOGLCK3 epoch=");
	q = put_hex(q, ls->epoch, 16);
	q = put_dec(put_text(q, " gen="), ls->gen, 20);
	q = put_dec(put_text(q, " busy="), ls->busy ? 1 : 0, 1);
	q = put_dec(put_text(q, " sick="), ls->sick ? 1 : 0, 1);
	q = put_dec(put_text(q, " pid="), ls->pid, 10);
	q = put_boot(q, ls->boot);
	q = put_dec(put_text(q, " next="), ls->next, 20);
	q = put_dec(put_text(q, " base="), ls->base, 20);
	q = put_dec(put_text(q, " size="), ls->size, 20);
	q = put_hex(put_text(q, " flags="), ls->flags, 8);
	q = put_dec(put_text(q, " idx="), ls->idx, 20);
	q = put_dec(put_text(q, " ixpos="), ls->ixpos, 20);
	q = put_signed(put_text(q, " ixts="), ls->ixts);
	q = put_signed(put_text(q, " ixmin="), ls->ixmin);
	q = put_signed(put_text(q, " ixlo="), ls->ixlo);
	q = put_signed(put_text(q, " ixhi="), ls->ixhi);
	q = put_dec(put_text(q, " ixany="), ls->ixany ? 1 : 0, 1);
	q = put_dec(put_text(q, " hseq="), ls->hseq, 20);
	q = put_text(q, " crc=");
	q = put_hex(q, elog__crc32c(0, p, (size_t)(q - p)), 8);
	q[0] = '\n';
	q[1] = '\0';
}

/* The field of width digits at p (decimal, or hex when hex), after the
 * name its caller checked; 0, or -1 on any other character. */
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

/* " boot=" and a boot id's 32 hex digits, as the state and the sync
 * records both carry it; and the digits back. */
static char *put_boot(char *q, const unsigned char boot[16])
{
	q = put_text(q, " boot=");
	for (int i = 0; i < 16; i++)
		q = put_hex(q, boot[i], 2);
	return q;
}

static int get_boot(const char *p, unsigned char boot[16])
{
	uint64_t b;
	for (int i = 0; i < 16; i++) {
		if (get_num(p + 2 * i, 2, 1, &b) != 0)
			return -1;
		boot[i] = (unsigned char)b;
	}
	return 0;
}

/* The fields are read at their positions, then the state is encoded
 * again and must give the same bytes: one canonical text per state, so
 * that no reading of a damaged file can pass for another state (the crc,
 * a digit out of range, a wrong name or space all differ). */
int elog__lock_state_decode(const char *p, size_t len, struct lock_state *ls)
{
	static const struct {
		unsigned short at, width;
		unsigned char hex, sign;
	} f[] = {
		{ 15, 16, 1, 0 },  { 36, 20, 0, 0 },  { 62, 1, 0, 0 },   { 69, 1, 0, 0 },
		{ 75, 10, 0, 0 },  { 129, 20, 0, 0 }, { 155, 20, 0, 0 }, { 181, 20, 0, 0 },
		{ 208, 8, 1, 0 },  { 221, 20, 0, 0 }, { 248, 20, 0, 0 }, { 275, 19, 0, 1 },
		{ 302, 19, 0, 1 }, { 328, 19, 0, 1 }, { 354, 19, 0, 1 }, { 380, 1, 0, 0 },
		{ 387, 20, 0, 0 },
	};
	uint64_t v[sizeof f / sizeof f[0]];
	char again[LOCK_STATE_LEN + 1];
	memset(ls, 0, sizeof *ls);
	if (len < LOCK_STATE_LEN || p[LOCK_STATE_LEN - 1] != '\n')
		return ELOG_CORRUPT;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (get_num(p + f[i].at, f[i].width, f[i].hex, &v[i]) != 0)
			return ELOG_CORRUPT;
		if (f[i].sign) {
			char s = p[f[i].at - 1];
			if (s != '+' && s != '-')
				return ELOG_CORRUPT;
			v[i] = s == '-' ? (uint64_t)0 - v[i] : v[i];
		}
	}
	struct lock_state s = { .valid = 1,
		                .epoch = v[0],
		                .gen = v[1],
		                .busy = (unsigned)v[2],
		                .sick = (unsigned)v[3],
		                .pid = (unsigned)v[4],
		                .next = v[5],
		                .base = v[6],
		                .size = v[7],
		                .flags = (uint32_t)v[8],
		                .idx = v[9],
		                .ixpos = v[10],
		                .ixts = (int64_t)v[11],
		                .ixmin = (int64_t)v[12],
		                .ixlo = (int64_t)v[13],
		                .ixhi = (int64_t)v[14],
		                .ixany = (unsigned)v[15],
		                .hseq = v[16] };
	if (get_boot(p + 91, s.boot) != 0)
		return ELOG_CORRUPT;
	if (v[4] > UINT32_MAX || v[8] > UINT32_MAX)
		return ELOG_CORRUPT;
	elog__lock_state_encode(again, &s);
	if (memcmp(again, p, LOCK_STATE_LEN) != 0)
		return ELOG_CORRUPT; /* a bad crc, or not the canonical text */
	*ls = s;
	return 0;
}


/* "ELOGSYN1 st=S seq=<20> pid=<10> boot=<32 hex> t=<20> cover=<20>
 * crc=<8 hex>\n": LOCK_SYNC_LEN bytes, canonical as the state is. */
void elog__sync_rec_encode(char *p, const struct sync_rec *r)
{
	char *q = put_text(p, "ELOGSYN1 st=");
	*q++ = r->status;
	q = put_dec(put_text(q, " seq="), r->seq, 20);
	q = put_dec(put_text(q, " pid="), r->pid, 10);
	q = put_boot(q, r->boot);
	q = put_dec(put_text(q, " t="), r->t_ns, 20);
	q = put_dec(put_text(q, " cover="), r->cover, 20);
	q = put_text(q, " crc=");
	q = put_hex(q, elog__crc32c(0, p, (size_t)(q - p)), 8);
	q[0] = '\n';
	q[1] = '\0';
}

int elog__sync_rec_decode(const char *p, size_t len, struct sync_rec *r)
{
	static const char states[] = { SYNC_ST_PENDING, SYNC_ST_OK, SYNC_ST_FAILED, SYNC_ST_HANDLED };
	uint64_t seq, pid, t, cover;
	char again[LOCK_SYNC_LEN + 1];
	memset(r, 0, sizeof *r);
	if (len < LOCK_SYNC_LEN || !memchr(states, p[12], sizeof states) ||
	    get_num(p + 18, 20, 0, &seq) || get_num(p + 43, 10, 0, &pid) ||
	    get_num(p + 94, 20, 0, &t) || get_num(p + 121, 20, 0, &cover) ||
	    pid > UINT32_MAX)
		return ELOG_CORRUPT;
	struct sync_rec s = { .valid = 1,
		              .status = p[12],
		              .seq = seq,
		              .pid = (unsigned)pid,
		              .t_ns = t,
		              .cover = cover };
	if (get_boot(p + 59, s.boot) != 0)
		return ELOG_CORRUPT;
	elog__sync_rec_encode(again, &s);
	if (memcmp(again, p, LOCK_SYNC_LEN) != 0)
		return ELOG_CORRUPT;
	*r = s;
	return 0;
}

/* "ELOGBEL1 id=<10> nonce=<16 hex> crc=<8 hex>\n": LOCK_BELL_LEN bytes. */
void elog__bell_rec_encode(char *p, uint32_t id, uint64_t nonce)
{
	char *q = put_dec(put_text(p, "ELOGBEL1 id="), id, 10);
	q = put_hex(put_text(q, " nonce="), nonce, 16);
	q = put_text(q, " crc=");
	q = put_hex(q, elog__crc32c(0, p, (size_t)(q - p)), 8);
	q[0] = '\n';
	q[1] = '\0';
}

int elog__bell_rec_decode(const char *p, size_t len, uint32_t *id, uint64_t *nonce)
{
	uint64_t i, n;
	char again[LOCK_BELL_LEN + 1];
	if (len < LOCK_BELL_LEN || get_num(p + 12, 10, 0, &i) ||
	    get_num(p + 29, 16, 1, &n) || i > UINT32_MAX)
		return ELOG_CORRUPT;
	elog__bell_rec_encode(again, (uint32_t)i, n);
	if (memcmp(again, p, LOCK_BELL_LEN) != 0)
		return ELOG_CORRUPT;
	*id = (uint32_t)i;
	*nonce = n;
	return 0;
}
