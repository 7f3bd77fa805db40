/*
 * fuzz_index: elog__idx_load(), elog__idx_quick_check() and the lookups over an
 * arbitrary index file (of either version) beside a small valid segment, plus
 * elog__idx_load() with a segment length from the input (which bounds what
 * it reads).  What is loaded must pass the one verdict, entry after entry,
 * and what a time window may skip must really be outside it.
 */
#include "fuzz.h"

static int dfd = -1, segfd = -1;
static uint64_t seg_len;

static void setup(void)
{
	unsigned char buf[4096];
	size_t len = SEG_HDR;
	elog__seg_header_encode(buf, 0, 0, NULL);
	for (uint64_t off = 0; off < 40; off++) {
		char v[8];
		struct elog_record rec = { off, (int64_t)(1000 + off * 10), 0, NULL, 0, v, 0 };
		rec.value_len = (size_t)snprintf(v, sizeof v, "%llu", (unsigned long long)off);
		elog__rec_encode(buf + len, &rec);
		len += elog__rec_size(0, rec.value_len);
	}
	dfd = open(fuzz_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		abort();
	fuzz_put(dfd, "00000000000000000000.log", buf, len);
	segfd = openat(dfd, "00000000000000000000.log", O_RDONLY | O_CLOEXEC);
	if (segfd < 0)
		abort();
	seg_len = len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct index ix;
	int intact;
	if (dfd < 0)
		setup();
	if (size < 4)
		return 0;
	uint32_t other_len = get32(data);
	fuzz_put(dfd, "00000000000000000000.idx", data + 4, size - 4);
	uint64_t lens[2] = { seg_len, other_len };
	for (int i = 0; i < 2; i++) {
		if (elog__idx_load(dfd, 0, lens[i], &ix, &intact) != 0)
			continue;
		for (size_t k = 0; k < ix.n; k++)
			if (ix.e[k].pos < SEG_HDR || ix.e[k].pos >= lens[i] ||
			    ix.e[k].ts_min > ix.e[k].ts_max ||
			    (k > 0 && (ix.e[k].offset <= ix.e[k - 1].offset ||
			               ix.e[k].ts_max < ix.e[k - 1].ts_max ||
			               ix.e[k].ts_min > ix.e[k - 1].ts_min)))
				abort();
		elog__idx_find_offset(&ix, other_len);
		elog__idx_find_time(&ix, (int64_t)other_len);
		/* A window from the input: the prefix it skips holds none. */
		int64_t lo = 1000 + (int64_t)(other_len & 0x1ff), hi = lo + (other_len >> 9 & 0xff);
		ssize_t j = elog__idx_skip_prefix(&ix, 0, lo, hi);
		if (j >= 0 && !(ix.e[j].ts_max < lo || ix.e[j].ts_min > hi))
			abort();
		elog__idx_free(&ix);
	}
	elog__idx_quick_check(dfd, segfd, 0, seg_len, 64 + other_len % 4096);
	struct idx_entry e;
	if (elog__idx_last(dfd, 0, seg_len, &e) == 0 && (e.pos < SEG_HDR || e.pos >= seg_len))
		abort();
	if (elog__idx_lookup(dfd, 0, seg_len, other_len % 64, &e) == 0 &&
	    (e.offset > other_len % 64 || e.pos < SEG_HDR || e.pos >= seg_len))
		abort();
	return 0;
}
