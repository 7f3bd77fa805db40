/*
 * fuzz_index: elog__idx_load(), elog__idx_quick_check() and the lookups over an
 * arbitrary index file beside a small valid segment, plus elog__idx_load() with
 * a segment length from the input (which bounds what it reads).
 */
#include "fuzz.h"

static int dfd = -1, segfd = -1;
static uint64_t seg_len;

static void setup(void)
{
	unsigned char buf[4096];
	size_t len = SEG_HDR;
	elog__seg_header_encode(buf, 0);
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
			    (k > 0 && ix.e[k].offset <= ix.e[k - 1].offset))
				abort();
		elog__idx_find_offset(&ix, other_len);
		elog__idx_find_time(&ix, (int64_t)other_len);
		elog__idx_free(&ix);
	}
	elog__idx_quick_check(dfd, segfd, 0, seg_len, 64 + other_len % 4096);
	return 0;
}
