/*
 * fuzz_logdir: a whole log directory with one file replaced by fuzzed
 * bytes, then everything that reads a log run over it: elog-verify's
 * check, a reader (to the end, seeks by offset, time and count), a repair
 * and the writer's recovery.  None may crash, leak, hang or report success
 * with damage left.
 *
 * The first input byte chooses the file: the active segment (raw, or after
 * a valid header), a closed segment after a valid header, a closed
 * segment's index, the watermark, or consumers.json.  The rest is its
 * content.
 */
#include <dirent.h>

#include "fuzz.h"
#include "consumers_json.h"

struct pristine {
	char name[NAME_MAX_LOCAL];
	unsigned char *data;
	size_t len;
};
static struct pristine files[16];
static size_t nfiles;
static char dir[128];
static int dfd = -1;

static void remove_all(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		abort();
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

/* Make a log of three segments with a committed consumer, and keep its
 * files in memory to restore before each input. */
static void setup(void)
{
	struct elog_options opt = { .create = 1, .segment_bytes = 4096, .index_interval = 256 };
	elog *w;
	char msg[ELOG_MSG_MAX];
	snprintf(dir, sizeof dir, "%s/log", fuzz_dir());
	if (elog_open(&w, dir, &opt) != 0)
		abort();
	for (int i = 0; i < 300; i++) {
		char v[32];
		struct elog_record rec = { 0, ELOG_TS_NOW, 1, "k", (size_t)(i % 3 == 0), v, 0 };
		rec.value_len = (size_t)snprintf(v, sizeof v, "{\"n\":%d}", i);
		if (elog_append(w, &rec, NULL) != 0)
			abort();
	}
	if (elog_close(w) != 0 || elog_consumer_commit(dir, "c1", 10, msg) != 0)
		abort();
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = opendir(dir);
	struct dirent *de;
	if (dfd < 0 || !d)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, FN_LOCK) == 0)
			continue;
		struct pristine *f = &files[nfiles++];
		char *text;
		snprintf(f->name, sizeof f->name, "%s", de->d_name);
		if (elog__fs_read_small(dfd, f->name, 1u << 20, &text, &f->len) != 0)
			abort();
		f->data = (unsigned char *)text;
	}
	closedir(d);
}

static const char *nth_segment(int last, uint64_t *base)
{
	static char name[NAME_MAX_LOCAL];
	struct seglist sl;
	if (elog__seglist_read(dfd, &sl) != 0 || sl.n < 2)
		abort();
	*base = last ? sl.base[sl.n - 1] : sl.base[0];
	elog__seglist_free(&sl);
	elog__seg_name(name, *base, SEG_EXT);
	return name;
}

static void read_all(void)
{
	elog_reader *r;
	struct elog_record rec;
	if (elog_reader_open(&r, dir) == 0) {
		int err, gaps = 0;
		for (int i = 0; i < 100000; i++) {
			err = elog_reader_next(r, &rec);
			if (err == ELOG_GAP && ++gaps < 100)
				continue;
			if (err)
				break;
		}
		elog_reader_seek(r, 150);
		elog_reader_next(r, &rec);
		elog_reader_seek_time(r, 0);
		elog_reader_next(r, &rec);
		elog_reader_seek_last(r, 5);
		elog_reader_next(r, &rec);
	}
	elog_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elog_verify_result res, again;
	char msg[ELOG_MSG_MAX], name[NAME_MAX_LOCAL];
	unsigned char *buf;
	uint64_t base;
	elog *w;
	if (dfd < 0)
		setup();
	if (size < 1)
		return 0;
	remove_all();
	for (size_t i = 0; i < nfiles; i++)
		fuzz_put(dfd, files[i].name, files[i].data, files[i].len);
	buf = malloc(SEG_HDR + size);
	if (!buf)
		abort();
	switch (data[0] % 6) {
	case 0:
		fuzz_put(dfd, nth_segment(1, &base), data + 1, size - 1);
		break;
	case 1:
	case 2:
		snprintf(name, sizeof name, "%s", nth_segment(data[0] % 6 == 1, &base));
		elog__seg_header_encode(buf, base, 0, NULL);
		memcpy(buf + SEG_HDR, data + 1, size - 1);
		fuzz_put(dfd, name, buf, SEG_HDR + size - 1);
		break;
	case 3:
		nth_segment(0, &base);
		elog__seg_name(name, base, IDX_EXT);
		fuzz_put(dfd, name, data + 1, size - 1);
		break;
	case 4:
		fuzz_put(dfd, FN_WATERMARK, data + 1, size - 1);
		break;
	default:
		fuzz_put(dfd, FN_CONSUMERS, data + 1, size - 1);
		break;
	}
	free(buf);

	elog_verify(dir, NULL, &res, msg);
	read_all();
	if (elog_verify(dir, &(struct elog_verify_opts){ .flags = ELOG_VERIFY_REPAIR }, &res,
	                msg) == 0 &&
	    res.remaining == 0) {
		/* What a repair calls clean must check clean afresh. */
		if (elog_verify(dir, NULL, &again, msg) != 0 || again.damage != 0)
			abort();
	}
	if (elog_open(&w, dir, NULL) == 0)
		read_all();
	elog_close(w);
	return 0;
}
