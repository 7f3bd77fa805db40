/*
 * power.c: the disk states a power loss can leave, built from a recording.
 *
 * Walking the operations in order, the model keeps what is durable (each
 * file's synced bytes; the directory's names as of its last fsync) and what
 * is pending (writes and truncations not yet covered by an fsync of their
 * file; names created, renamed or removed since the directory's last
 * fsync).  At each point (before every operation, and after the last) it
 * builds disk states from the durable part plus a choice for each pending
 * operation: dropped, applied, or, for a write, torn at a 512-byte or
 * 4-KiB boundary (only the part before, or only the part after), replaced
 * by zeros or by garbage, or mixed sector by sector.  Choosing some later
 * writes and not earlier ones is a reordering.  Names are applied or undone
 * each on its own.  Every distinct state is written to a directory and
 * checked (expect.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash.h"

enum { C_DROP, C_APPLY, C_HEAD, C_TAIL, C_ZERO, C_JUNK, C_MIX };

struct choice {
	int how;
	uint64_t at; /* C_HEAD/C_TAIL: the boundary; C_MIX/C_JUNK: seed */
};

struct file {
	unsigned char *d;
	size_t len, cap;
	unsigned long ver; /* changes with its durable bytes */
};

struct name {
	char *name;
	int ino;
};

struct model {
	const struct vfs_log *log;
	struct file *f; /* durable contents by inode */
	int nf;
	struct name *names; /* durable directory */
	size_t nnames, capnames;
	size_t *pw, npw;       /* pending data operations */
	size_t *pd, npd;       /* pending name operations */
	unsigned long version; /* changes with the durable part */
};

static void file_put(struct file *f, uint64_t off, const unsigned char *p, size_t n)
{
	if (n == 0) /* an empty file of the start (writers): nothing to put */
		return;
	if (off + n > f->cap) {
		size_t c = f->cap ? f->cap : 4096;
		while (c < off + n)
			c *= 2;
		unsigned char *d = realloc(f->d, c);
		if (!d)
			die("out of memory");
		f->d = d;
		f->cap = c;
	}
	if (off > f->len)
		memset(f->d + f->len, 0, off - f->len);
	memcpy(f->d + off, p, n);
	if (off + n > f->len)
		f->len = off + n;
}

static void file_trunc(struct file *f, uint64_t len)
{
	if (len > f->len) {
		static const unsigned char z[1];
		file_put(f, len - 1, z, 1);
	}
	f->len = len;
}

/* Applies a pending data operation to f as choice ch says. */
static void apply_data(struct file *f, const struct op *o, struct choice ch)
{
	uint64_t end = o->off + o->len;
	if (ch.how == C_DROP)
		return;
	if (o->kind == OP_TRUNC) {
		file_trunc(f, o->off);
		return;
	}
	switch (ch.how) {
	case C_APPLY:
		file_put(f, o->off, o->data, o->len);
		break;
	case C_HEAD:
		file_put(f, o->off, o->data, ch.at - o->off);
		break;
	case C_TAIL:
		/* The part before the boundary never reached the disk: the
		 * file still reaches its end, with old bytes or zeros. */
		if (o->off > f->len) {
			static const unsigned char z[1];
			file_put(f, o->off, z, 1);
		}
		file_put(f, ch.at, o->data + (ch.at - o->off), end - ch.at);
		break;
	case C_ZERO:
	case C_JUNK:
	case C_MIX: {
		unsigned char *tmp = malloc(o->len);
		uint64_t s = ch.at | 1;
		if (!tmp)
			die("out of memory");
		for (size_t i = 0; i < o->len; i++)
			tmp[i] = ch.how == C_ZERO ? 0 : (unsigned char)rng_next(&s);
		if (ch.how == C_MIX) {
			/* Each 512-byte sector: the new bytes, the old, or
			 * garbage. */
			for (uint64_t sec = o->off & ~511ull; sec < end; sec += 512) {
				uint64_t a = sec < o->off ? o->off : sec;
				uint64_t b = sec + 512 < end ? sec + 512 : end;
				unsigned r = (unsigned)(rng_next(&s) % 3);
				for (uint64_t i = a; i < b; i++) {
					if (r == 0)
						tmp[i - o->off] = o->data[i - o->off];
					else if (r == 1)
						tmp[i - o->off] = i < f->len ? f->d[i] : 0;
				}
			}
		}
		file_put(f, o->off, tmp, o->len);
		free(tmp);
		break;
	}
	}
}

static void names_set(struct name **v, size_t *n, size_t *cap, const char *name, int ino)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			(*v)[i].ino = ino;
			return;
		}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		struct name *nv = realloc(*v, *cap * sizeof *nv);
		if (!nv)
			die("out of memory");
		*v = nv;
	}
	(*v)[*n].name = strdup(name);
	(*v)[(*n)++].ino = ino;
}

static void names_drop(struct name *v, size_t *n, const char *name, int ino)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].name, name) == 0 && v[i].ino == ino) {
			free(v[i].name);
			v[i] = v[--*n];
			return;
		}
}

static void apply_name(struct name **v, size_t *n, size_t *cap, const struct op *o)
{
	switch (o->kind) {
	case OP_LINK:
		names_set(v, n, cap, o->name, o->ino);
		break;
	case OP_RENAME:
		names_drop(*v, n, o->name, o->ino);
		names_set(v, n, cap, o->name2, o->ino);
		break;
	case OP_UNLINK:
		names_drop(*v, n, o->name, o->ino);
		break;
	}
}

static struct file *model_file(struct model *m, int ino)
{
	if (ino >= m->nf) {
		int nf = ino + 64;
		struct file *f = realloc(m->f, (size_t)nf * sizeof *f);
		if (!f)
			die("out of memory");
		memset(f + m->nf, 0, (size_t)(nf - m->nf) * sizeof *f);
		m->f = f;
		m->nf = nf;
	}
	return &m->f[ino];
}

/* Moves the model past operation i. */
void model_step(struct model *m, size_t i)
{
	const struct op *o = &m->log->ops[i];
	size_t j, keep;
	switch (o->kind) {
	case OP_WRITE:
	case OP_TRUNC:
		m->pw[m->npw++] = i;
		break;
	case OP_FSYNC:
		/* Durable now, or (a failed fsync) lost for good. */
		for (j = keep = 0; j < m->npw; j++) {
			const struct op *p = &m->log->ops[m->pw[j]];
			if (p->ino != o->ino) {
				m->pw[keep++] = m->pw[j];
				continue;
			}
			if (!o->off)
				apply_data(model_file(m, p->ino), p, (struct choice){ C_APPLY, 0 });
		}
		m->npw = keep;
		model_file(m, o->ino)->ver++;
		m->version++;
		break;
	case OP_LINK:
	case OP_RENAME:
	case OP_UNLINK:
		m->pd[m->npd++] = i;
		break;
	case OP_DIRSYNC:
		for (j = 0; j < m->npd; j++)
			apply_name(&m->names, &m->nnames, &m->capnames, &m->log->ops[m->pd[j]]);
		m->npd = 0;
		m->version++;
		break;
	}
}

struct model *model_new(const struct vfs_log *log)
{
	struct model *m = calloc(1, sizeof *m);
	if (!m)
		die("out of memory");
	m->log = log;
	m->pw = malloc((log->nops + 1) * sizeof *m->pw);
	m->pd = malloc((log->nops + 1) * sizeof *m->pd);
	if (!m->pw || !m->pd)
		die("out of memory");
	for (size_t i = 0; i < log->nstart; i++) {
		const struct vfile *v = &log->start[i];
		file_put(model_file(m, v->ino), 0, v->data, v->len);
		names_set(&m->names, &m->nnames, &m->capnames, v->name, v->ino);
	}
	return m;
}

void model_free(struct model *m)
{
	for (int i = 0; i < m->nf; i++)
		free(m->f[i].d);
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i].name);
	free(m->f);
	free(m->names);
	free(m->pw);
	free(m->pd);
	free(m);
}

unsigned long model_version(const struct model *m)
{
	return m->version;
}

void model_durable_each(struct model *m, model_file_fn fn, void *arg)
{
	for (size_t i = 0; i < m->nnames; i++) {
		const struct file *f = model_file(m, m->names[i].ino);
		fn(m->names[i].name, m->names[i].ino, f->ver, f->d, f->len, arg);
	}
}

/* ---- building and checking one state ---- */

struct run {
	const struct workload *w;
	const char *dir;
	struct model *m;
	struct power_stats *st;
	uint64_t *seen; /* hashes of states already checked */
	size_t nseen, capseen;
	size_t k;
	uint64_t visible;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

static int seen_before(struct run *r, uint64_t h)
{
	size_t cap = r->capseen;
	if (r->nseen * 2 >= cap) {
		size_t ncap = cap ? cap * 2 : 1 << 16;
		uint64_t *n = calloc(ncap, sizeof *n);
		if (!n)
			die("out of memory");
		for (size_t i = 0; i < cap; i++)
			if (r->seen[i]) {
				size_t j = r->seen[i] & (ncap - 1);
				while (n[j])
					j = (j + 1) & (ncap - 1);
				n[j] = r->seen[i];
			}
		free(r->seen);
		r->seen = n;
		r->capseen = cap = ncap;
	}
	h |= 1;
	size_t j = h & (cap - 1);
	while (r->seen[j]) {
		if (r->seen[j] == h)
			return 1;
		j = (j + 1) & (cap - 1);
	}
	r->seen[j] = h;
	r->nseen++;
	return 0;
}

static void write_file(const char *dir, const char *name, const struct file *f)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		die("%s: cannot create", path);
	if (f->len && write(fd, f->d, f->len) != (ssize_t)f->len)
		die("%s: cannot write", path);
	close(fd);
}

static const char *how_name[] = {
	"dropped", "applied", "head", "tail", "zeros", "garbage", "mixed"
};

/* Builds the state cw/cd describe, checks it unless seen before. */
static void state(struct run *r, const struct choice *cw, const unsigned char *cd, const char *what)
{
	struct model *m = r->m;
	const struct vfs_log *log = m->log;
	struct name *names = NULL;
	size_t nn = 0, capn = 0;

	r->st->states++;
	for (size_t i = 0; i < m->nnames; i++)
		names_set(&names, &nn, &capn, m->names[i].name, m->names[i].ino);
	for (size_t i = 0; i < m->npd; i++)
		if (cd[i])
			apply_name(&names, &nn, &capn, &log->ops[m->pd[i]]);

	struct file *img = calloc(nn ? nn : 1, sizeof *img);
	uint64_t h = 0xcbf29ce484222325ull;
	if (!img)
		die("out of memory");
	for (size_t i = 0; i < nn; i++) {
		struct file *src = model_file(m, names[i].ino);
		if (src->len)
			file_put(&img[i], 0, src->d, src->len);
		for (size_t j = 0; j < m->npw; j++) {
			const struct op *o = &log->ops[m->pw[j]];
			if (o->ino == names[i].ino)
				apply_data(&img[i], o, cw[j]);
		}
		h = fnv(h, names[i].name, strlen(names[i].name) + 1);
		h = fnv(h, &img[i].len, sizeof img[i].len);
		h = fnv(h, img[i].d, img[i].len);
	}
	if (!seen_before(r, h)) {
		char where[512];
		r->st->unique++;
		rm_rf(r->dir);
		if (mkdir(r->dir, 0777) < 0)
			die("%s: cannot create", r->dir);
		for (size_t i = 0; i < nn; i++)
			write_file(r->dir, names[i].name, &img[i]);
		snprintf(where, sizeof where,
		         "crash after %zu of %zu operations (%zu writes, %zu names pending), %s",
		         r->k, log->nops, m->npw, m->npd, what);
		unsigned f = check_state(r->w, r->dir, r->k, r->visible, where, 1);
		if (f && !r->st->failures) {
			/* The first failing state, as it was, for a look. */
			char keep[1200];
			snprintf(keep, sizeof keep, "%s.failed", r->dir);
			rm_rf(keep);
			if (mkdir(keep, 0777) < 0)
				die("%s: cannot create", keep);
			for (size_t i = 0; i < nn; i++)
				write_file(keep, names[i].name, &img[i]);
			fprintf(stderr, "crashsim: the first failing state is kept in %s\n", keep);
		}
		r->st->failures += f;
		if (f) {
			for (size_t j = 0; j < m->npw; j++) {
				const struct op *o = &log->ops[m->pw[j]];
				fprintf(stderr,
				        "  pending write %zu: inode %d, %s %llu+%zu: %s at %llu\n",
				        j, o->ino, o->kind == OP_TRUNC ? "truncate" : "write",
				        (unsigned long long)o->off, o->len, how_name[cw[j].how],
				        (unsigned long long)cw[j].at);
			}
			for (size_t j = 0; j < m->npd; j++) {
				const struct op *o = &log->ops[m->pd[j]];
				fprintf(stderr, "  pending name %zu: %s %s%s%s (inode %d): %s\n", j,
				        o->kind == OP_LINK     ? "create"
				        : o->kind == OP_RENAME ? "rename"
				                               : "unlink",
				        o->name, o->name2 ? " -> " : "", o->name2 ? o->name2 : "",
				        o->ino, cd[j] ? "applied" : "undone");
			}
		}
	}
	for (size_t i = 0; i < nn; i++) {
		free(names[i].name);
		free(img[i].d);
	}
	free(names);
	free(img);
}

/* The boundaries at which a write may tear: 512-byte sector starts inside
 * it, at most max of them (the first ones and the 4-KiB ones first). */
static size_t tears(const struct op *o, uint64_t *at, size_t max)
{
	size_t n = 0;
	uint64_t end = o->off + o->len;
	for (uint64_t b = (o->off + 4096) & ~4095ull; b < end && n < max / 2; b += 4096)
		at[n++] = b;
	for (uint64_t b = (o->off + 512) & ~511ull; b < end && n < max; b += 512)
		if (b % 4096)
			at[n++] = b;
	return n;
}

/* The states checked at one point. */
static void point(struct run *r, uint64_t *rs, unsigned nrandom)
{
	struct model *m = r->m;
	size_t npw = m->npw, npd = m->npd;
	struct choice *cw = calloc(npw + 1, sizeof *cw);
	unsigned char *cd = calloc(npd + 1, 1);
	char what[160];
	if (!cw || !cd)
		die("out of memory");

#define ALL(hw, nm) \
	do { \
		for (size_t _i = 0; _i < npw; _i++) \
			cw[_i] = (struct choice){ hw, 0 }; \
		memset(cd, nm, npd); \
	} while (0)

	ALL(C_DROP, 0);
	state(r, cw, cd, "every pending operation lost");
	ALL(C_APPLY, 1);
	state(r, cw, cd, "every pending operation done");
	ALL(C_APPLY, 0);
	state(r, cw, cd, "writes done, names undone");
	ALL(C_DROP, 1);
	state(r, cw, cd, "writes lost, names done");

	/* Names: each prefix, and each one undone alone. */
	for (size_t i = 0; i < npd; i++) {
		ALL(C_APPLY, 0);
		memset(cd, 1, i);
		snprintf(what, sizeof what, "names before %zu done", i);
		state(r, cw, cd, what);
		memset(cd, 1, npd);
		cd[i] = 0;
		snprintf(what, sizeof what, "name %zu undone", i);
		state(r, cw, cd, what);
	}

	/* Writes: in order up to each, each lost alone, each done alone, and
	 * the last few torn, zeroed or garbled with those before done. */
	size_t from = npw > 8 ? npw - 8 : 0;
	for (size_t i = from; i < npw; i++) {
		ALL(C_APPLY, 1);
		for (size_t j = i; j < npw; j++)
			cw[j].how = C_DROP;
		snprintf(what, sizeof what, "writes before %zu done", i);
		state(r, cw, cd, what);
		ALL(C_APPLY, 1);
		cw[i].how = C_DROP;
		snprintf(what, sizeof what, "write %zu lost", i);
		state(r, cw, cd, what);
		ALL(C_DROP, 1);
		cw[i].how = C_APPLY;
		snprintf(what, sizeof what, "only write %zu done", i);
		state(r, cw, cd, what);

		const struct op *o = &r->m->log->ops[m->pw[i]];
		if (o->kind != OP_WRITE || i + 4 < npw)
			continue;
		uint64_t at[6];
		size_t nt = tears(o, at, 6);
		static const int hows[] = { C_HEAD, C_TAIL };
		for (size_t t = 0; t < nt; t++)
			for (int hw = 0; hw < 2; hw++) {
				ALL(C_APPLY, 1);
				for (size_t j = i + 1; j < npw; j++)
					cw[j].how = C_DROP;
				cw[i] = (struct choice){ hows[hw], at[t] };
				snprintf(what, sizeof what, "write %zu torn at byte %llu (%s kept)",
				         i, (unsigned long long)at[t], hw ? "tail" : "head");
				state(r, cw, cd, what);
			}
		static const int bad[] = { C_ZERO, C_JUNK, C_MIX };
		for (int b = 0; b < 3; b++) {
			ALL(C_APPLY, 1);
			for (size_t j = i + 1; j < npw; j++)
				cw[j].how = C_DROP;
			cw[i] = (struct choice){ bad[b], rng_next(rs) };
			snprintf(what, sizeof what, "write %zu %s", i, how_name[bad[b]]);
			state(r, cw, cd, what);
		}
	}

	/* Random mixtures. */
	for (unsigned n = 0; n < nrandom && (npw || npd); n++) {
		for (size_t i = 0; i < npw; i++) {
			const struct op *o = &r->m->log->ops[m->pw[i]];
			unsigned x = (unsigned)(rng_next(rs) % 100);
			uint64_t at[6];
			size_t nt = o->kind == OP_WRITE ? tears(o, at, 6) : 0;
			cw[i].at = rng_next(rs);
			if (x < 45)
				cw[i].how = C_APPLY;
			else if (x < 70 || o->kind == OP_TRUNC)
				cw[i].how = C_DROP;
			else if (x < 80 && nt)
				cw[i] = (struct choice){ x & 1 ? C_HEAD : C_TAIL,
					                 at[rng_next(rs) % nt] };
			else if (x < 85)
				cw[i].how = C_ZERO;
			else if (x < 90)
				cw[i].how = C_JUNK;
			else
				cw[i].how = C_MIX;
		}
		for (size_t i = 0; i < npd; i++)
			cd[i] = (unsigned char)(rng_next(rs) & 1);
		snprintf(what, sizeof what, "random mixture %u", n);
		state(r, cw, cd, what);
	}
#undef ALL
	free(cw);
	free(cd);
}

/* The state where every pending operation is lost: what is durable. */
static void durable_only(struct run *r)
{
	struct choice *cw = calloc(r->m->npw + 1, sizeof *cw);
	unsigned char *cd = calloc(r->m->npd + 1, 1);
	if (!cw || !cd)
		die("out of memory");
	state(r, cw, cd, "only what was synced");
	free(cw);
	free(cd);
}

/* Checks process id's share (of nproc) of the points (of one in
 * power_sample of them). */
static int power_part(const struct workload *w, const char *dir, const struct vfs_log *log,
                      unsigned seed, unsigned random_per_point, int final_only, unsigned id,
                      unsigned nproc, struct power_stats *st)
{
	struct model *mp = model_new(log);
	struct run r = { .w = w, .dir = dir, .m = mp, .st = st };
	uint64_t rs = 0x9e3779b97f4a7c15ull ^ seed ^ ((uint64_t)id << 32);

	r.visible = expect_acked_end(0);
	/* The points of the sample: one in power_sample, from a phase the
	 * seed and the workload's name give (whatever the number of
	 * processes), shared out in turn. */
	size_t every = power_sample ? power_sample : 1;
	uint64_t ps = power_sample_seed ^ fnv(0xcbf29ce484222325ull, w->name, strlen(w->name));
	size_t phase = every > 1 ? (size_t)(rng_next(&ps) % every) : 0;
	for (size_t k = 0; k <= log->nops; k++) {
		r.k = k;
		/* One point in power_sample, and the last one always, by the
		 * process whose share it is. */
		int in = (k + phase) % every == 0;
		int due = final_only ? k == log->nops
		                     : (in && (k + phase) / every % nproc == id) ||
		                               (k == log->nops && !in && k % nproc == id);
		if (due) {
			st->points++;
			if (final_only)
				durable_only(&r);
			else
				point(&r, &rs, random_per_point);
			if (st->failures > 20)
				break;
		}
		if (k < log->nops) {
			model_step(mp, k);
			if (log->ops[k].wm_end > r.visible)
				r.visible = log->ops[k].wm_end;
		}
	}
	model_free(mp);
	free(r.seen);
	return st->failures ? 1 : 0;
}

/* The same boot, later: every pending write done (still dirty in the
 * cache) but the ones a failed sync lost, whose pages the kernel evicted
 * since, so that the file reads what the disk has there.  A file keeps
 * its length (the inode stays in memory).  LOCK, never recorded, is the
 * live one, and its state of this boot is trusted. */
int power_evicted(const struct workload *w, const char *dir, const char *live,
                  const struct vfs_log *log, uint64_t visible, const char *where)
{
	struct model *m = model_new(log);
	struct name *names = NULL;
	size_t nn = 0, capn = 0;
	char path[4096];
	for (size_t k = 0; k < log->nops; k++)
		model_step(m, k);
	for (size_t i = 0; i < m->nnames; i++)
		names_set(&names, &nn, &capn, m->names[i].name, m->names[i].ino);
	for (size_t i = 0; i < m->npd; i++)
		apply_name(&names, &nn, &capn, &log->ops[m->pd[i]]);
	rm_rf(dir);
	if (mkdir(dir, 0777) < 0)
		die("%s: cannot create", dir);
	for (size_t i = 0; i < nn; i++) {
		struct file img = { 0 };
		struct file *src = model_file(m, names[i].ino);
		struct stat st;
		if (src->len)
			file_put(&img, 0, src->d, src->len);
		for (size_t j = 0; j < m->npw; j++) {
			const struct op *o = &log->ops[m->pw[j]];
			if (o->ino == names[i].ino)
				apply_data(&img, o, (struct choice){ C_APPLY, 0 });
		}
		snprintf(path, sizeof path, "%s/%s", live, names[i].name);
		if (stat(path, &st) == 0 && (size_t)st.st_size > img.len)
			file_trunc(&img, (uint64_t)st.st_size);
		write_file(dir, names[i].name, &img);
		free(img.d);
		free(names[i].name);
	}
	free(names);
	model_free(m);
	/* LOCK as the writers left it. */
	struct file lock = { 0 };
	snprintf(path, sizeof path, "%s/LOCK", live);
	FILE *f = fopen(path, "rb");
	if (f) {
		unsigned char buf[4096];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		file_put(&lock, 0, buf, n);
		write_file(dir, "LOCK", &lock);
		free(lock.d);
	}
	return (int)check_state(w, dir, log->nops, visible, where, 0);
}

unsigned power_sample = 1;
unsigned long power_sample_seed;

/* The points are shared out among processes, one per CPU (at most 4), each
 * with its own scratch directory. */
int power_run(const struct workload *w, const char *dir, const struct vfs_log *log, unsigned seed,
              unsigned random_per_point, int final_only, struct power_stats *st)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nproc = final_only || cpus < 2 ? 1 : cpus > 4 ? 4 : (unsigned)cpus;
	if (nproc == 1)
		return power_part(w, dir, log, seed, random_per_point, final_only, 0, 1, st);

	pid_t pid[4];
	int fd[4];
	for (unsigned i = 0; i < nproc; i++) {
		int p[2];
		if (pipe(p) < 0)
			die("pipe");
		fflush(stdout);
		fflush(stderr);
		if ((pid[i] = fork()) < 0)
			die("fork");
		if (pid[i] == 0) {
			char sub[1200];
			struct power_stats part = { 0 };
			close(p[0]);
			snprintf(sub, sizeof sub, "%s.%u", dir, i);
			power_part(w, sub, log, seed, random_per_point, 0, i, nproc, &part);
			rm_rf(sub);
			if (write(p[1], &part, sizeof part) != (ssize_t)sizeof part)
				_exit(3);
			_exit(0);
		}
		close(p[1]);
		fd[i] = p[0];
	}
	int bad = 0;
	for (unsigned i = 0; i < nproc; i++) {
		struct power_stats part;
		int status;
		ssize_t n = read(fd[i], &part, sizeof part);
		close(fd[i]);
		if (waitpid(pid[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
		    n != (ssize_t)sizeof part) {
			fprintf(stderr, "crashsim: %s: checking process %u died (status %#x)\n",
			        w->name, i, (unsigned)status);
			bad = 1;
			continue;
		}
		st->points += part.points;
		st->states += part.states;
		st->unique += part.unique;
		st->failures += part.failures;
	}
	return bad || st->failures ? 1 : 0;
}
