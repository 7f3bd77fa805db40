/*
 * test_compress.c: zstd value compression and dictionaries (lib/compress.c
 * and its use by the writer and readers).  In a build without zstd the
 * same file checks that compressed logs are refused clearly instead.
 */
#include <dirent.h>

#include "unit.h"

/* The flags of segment base's header. */
static uint32_t flags_of(uint64_t base)
{
	size_t n;
	unsigned char *h = ut_read_file(ut_seg_path(ut_dir, base, SEG_EXT), &n);
	ck_assert_uint_ge(n, SEG_HDR);
	uint32_t f = elog__seg_header_flags(h);
	free(h);
	return f;
}

#ifdef ELOG_HAVE_ZSTD

static elog *open_zstd(const char *dir, uint64_t segment_bytes)
{
	struct elog_options o = { 0 };
	elog *w;
	o.create = 1;
	o.segment_bytes = segment_bytes;
	o.compression = ELOG_COMPRESS_ZSTD;
	int rc = elog_open(&w, dir, &o);
	ck_assert_msg(rc == 0, "elog_open: %d %s", rc, elog_errmsg(w));
	return w;
}

/* A small JSON event (about 120 bytes), different for every i, as an edge
 * gateway's sensors would send. */
static size_t event(char *buf, size_t size, int i)
{
	int n = snprintf(buf, size,
	                 "{\"device\":\"gw-07/temp-%03d\",\"ts\":\"2026-11-30T03:%02d:%02d."
	                 "%03dZ\",\"temp_c\":%.2f,\"humidity\":%.1f,\"battery_v\":%.2f,"
	                 "\"status\":\"ok\"}",
	                 i % 97, (i / 600) % 60, (i / 10) % 60, (i * 37) % 1000,
	                 15 + (i % 1700) / 100.0, 30 + (i % 500) / 10.0, 3.3 + (i % 90) / 100.0);
	return (size_t)n;
}

static uint64_t dir_bytes(const char *dir, const char *ext)
{
	uint64_t total = 0;
	char path[1200];
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name), e = strlen(ext);
		if (n > e && strcmp(de->d_name + n - e, ext) == 0)
			total += ut_file_size(ut_path(path, sizeof path, dir, de->d_name));
	}
	closedir(d);
	return total;
}

/* Append each value, then read them all back byte for byte. */
static void round_trip(const unsigned char **vals, const size_t *lens, size_t n)
{
	elog *w = open_zstd(ut_dir, 0);
	for (size_t i = 0; i < n; i++) {
		struct elog_record r = { .ts_ms = 1,
			                 .key = "k",
			                 .key_len = 1,
			                 .value = vals[i],
			                 .value_len = lens[i] };
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	for (size_t i = 0; i < n; i++) {
		UT_OK(elog_reader_next(r, &rec), r);
		ck_assert_uint_eq(rec.offset, i);
		ck_assert_uint_eq(rec.value_len, lens[i]);
		if (lens[i])
			ck_assert_mem_eq(rec.value, vals[i], lens[i]);
	}
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);
	elog_reader_close(r);
}

UT_TEST(round_trip_empty_tiny_large_incompressible)
{
	size_t big = 1u << 20, rnd = 4096;
	unsigned char *large = malloc(big), *noise = malloc(rnd);
	ck_assert_ptr_nonnull(large);
	ck_assert_ptr_nonnull(noise);
	for (size_t i = 0; i < big; i++)
		large[i] = (unsigned char)"abcabcabd"[i % 9];
	srand(7);
	for (size_t i = 0; i < rnd; i++)
		noise[i] = (unsigned char)rand();
	const unsigned char *vals[] = { (const unsigned char *)"", (const unsigned char *)"x",
		                        large, noise, (const unsigned char *)"\0\1\2" };
	size_t lens[] = { 0, 1, big, rnd, 3 };
	round_trip(vals, lens, 5);
	free(large);
	free(noise);
}
END_TEST

UT_TEST(values_that_do_not_shrink_are_stored_raw)
{
	/* Tag byte 0 and the value itself, one byte longer than given. */
	uint32_t flags = SEG_FLAGS(CODEC_ZSTD, 0);
	struct venc *z = elog__venc_new(elog__codec_for_flags(flags), 3);
	const void *p;
	const unsigned char *out;
	size_t n;
	char msg[ELOG_MSG_MAX];
	ck_assert_ptr_nonnull(z);
	UT_OK(elog__venc_value(z, -1, flags, "ab", 2, &p, &n, msg), msg);
	out = p;
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(out[0], TAG_RAW);
	ck_assert_mem_eq(out + 1, "ab", 2);
	elog__venc_free(z);
}
END_TEST

UT_TEST(stored_frames_have_no_magic_number)
{
	char v[400];
	memset(v, 'a', sizeof v);
	uint32_t flags = SEG_FLAGS(CODEC_ZSTD, 0);
	struct venc *z = elog__venc_new(elog__codec_for_flags(flags), 3);
	const void *p;
	const unsigned char *out;
	size_t n, len;
	char msg[ELOG_MSG_MAX];
	UT_OK(elog__venc_value(z, -1, flags, v, sizeof v, &p, &n, msg), msg);
	out = p;
	ck_assert_uint_eq(out[0], TAG_ZSTD);
	ck_assert_uint_lt(n, 40);
	/* A standard frame would start 28 b5 2f fd; the tag replaces it. */
	ck_assert(!(out[1] == 0x28 && out[2] == 0xb5));
	struct vdec *d = elog__vdec_new();
	UT_OK(elog__vdec_value(d, -1, flags, out, n, &p, &len, msg), msg);
	ck_assert_uint_eq(len, sizeof v);
	ck_assert_mem_eq(p, v, sizeof v);
	/* In an uncompressed segment, values are stored as given. */
	UT_OK(elog__venc_value(z, -1, 0, v, sizeof v, &p, &n, msg), msg);
	ck_assert_ptr_eq(p, v);
	ck_assert_uint_eq(n, sizeof v);
	UT_OK(elog__vdec_value(d, -1, 0, v, sizeof v, &p, &len, msg), msg);
	ck_assert_ptr_eq(p, v);
	ck_assert_uint_eq(len, sizeof v);
	elog__vdec_free(d);
	elog__venc_free(z);
}
END_TEST

UT_TEST(dictionary_halves_small_json_events)
{
	char v[256];
	elog *w = open_zstd(ut_dir, 0);
	for (int i = 0; i < 50000; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);

	char plain[1200];
	snprintf(plain, sizeof plain, "%s/plain", ut_top);
	w = ut_open_writer(plain, 0, 0);
	for (int i = 0; i < 50000; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);

	char p[1200];
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	uint64_t zbytes = dir_bytes(ut_dir, ".log"), pbytes = dir_bytes(plain, ".log");
	ck_assert_msg(zbytes * 2 <= pbytes, "compressed %llu vs plain %llu",
	              (unsigned long long)zbytes, (unsigned long long)pbytes);

	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	for (int i = 0; i < 50000; i++) {
		UT_OK(elog_reader_next(r, &rec), r);
		size_t n = event(v, sizeof v, i);
		ck_assert_uint_eq(rec.value_len, n);
		ck_assert_mem_eq(rec.value, v, n);
	}
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);
	elog_reader_close(r);
}
END_TEST

/* Fill a compressed log until it has trained dictionary 1. */
static void make_trained_log(int records)
{
	char v[256];
	elog *w = open_zstd(ut_dir, 64 * 1024);
	for (int i = 0; i < records; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
}

static void read_all_events(int records)
{
	char v[256];
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	for (int i = 0; i < records; i++) {
		int rc = elog_reader_next(r, &rec);
		ck_assert_msg(rc == 0, "record %d: %d %s", i, rc, elog_reader_errmsg(r));
		size_t n = event(v, sizeof v, i);
		ck_assert_uint_eq(rec.value_len, n);
		ck_assert_mem_eq(rec.value, v, n);
	}
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);
	elog_reader_close(r);
}

UT_TEST(no_dictionary_means_none_is_trained)
{
	struct elog_options o = { 0 };
	elog *w;
	char v[256], p[1200];
	o.create = 1;
	o.compression = ELOG_COMPRESS_ZSTD;
	o.no_dictionary = 1;
	UT_OK(elog_open(&w, ut_dir, &o), w);
	for (int i = 0; i < 3000; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	ck_assert_uint_eq(flags_of(0), SEG_FLAGS(CODEC_ZSTD, 0));
	read_all_events(3000);
}
END_TEST

UT_TEST(segments_keep_the_dictionary_they_were_written_with)
{
	make_trained_log(3000);
	/* A second dictionary (here: a copy of the first under id 2) is
	 * used by segments made after it; older ones still read with 1. */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	unsigned char *d;
	size_t len;
	char msg[ELOG_MSG_MAX];
	UT_OK(elog__dict_load(dfd, 1, &d, &len, msg), msg);
	UT_OK(elog__dict_store(dfd, 2, d, len), NULL);
	free(d);
	close(dfd);
	char v[256];
	elog *w = open_zstd(ut_dir, 64 * 1024);
	for (int i = 3000; i < 6000; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);

	/* Both dictionaries are referenced by some segment header. */
	int seen1 = 0, seen2 = 0;
	dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	for (size_t i = 0; i < sl.n; i++) {
		size_t n;
		unsigned char *h = ut_read_file(ut_seg_path(ut_dir, sl.base[i], SEG_EXT), &n);
		uint32_t flags = elog__seg_header_flags(h);
		ck_assert_uint_eq(SEG_CODEC(flags), CODEC_ZSTD);
		seen1 |= SEG_DICT(flags) == 1;
		seen2 |= SEG_DICT(flags) == 2;
		free(h);
	}
	elog__seglist_free(&sl);
	close(dfd);
	ck_assert(seen1 && seen2);
	read_all_events(6000);
}
END_TEST

/* ---- training from the log's first values ---- */

/* Append events first .. first + n - 1 through w. */
static void append_events(elog *w, int first, int n)
{
	char v[256];
	for (int i = first; i < first + n; i++) {
		struct elog_record r = { .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		int rc = elog_append(w, &r, NULL);
		ck_assert_msg(rc == 0, "event %d: %d %s", i, rc, elog_errmsg(w));
	}
}

/* The bases of dir's segments, and the dictionary each names. */
static size_t segment_dicts(const char *dir, uint64_t *base, uint32_t *dict, size_t max)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_le(sl.n, max);
	for (size_t i = 0; i < sl.n; i++) {
		size_t n;
		unsigned char *h = ut_read_file(ut_seg_path(dir, sl.base[i], SEG_EXT), &n);
		ck_assert_uint_ge(n, SEG_HDR);
		base[i] = sl.base[i];
		dict[i] = SEG_DICT(elog__seg_header_flags(h));
		ck_assert_uint_eq(SEG_CODEC(elog__seg_header_flags(h)), CODEC_ZSTD);
		free(h);
	}
	size_t n = sl.n;
	elog__seglist_free(&sl);
	close(dfd);
	return n;
}

/* dir/dict.1 holds the same bytes as the one a single handle trains from
 * the first 3000 events. */
static void same_dictionary_as_one_handle(const char *dir)
{
	char one[1200], p[1200], q[1200];
	snprintf(one, sizeof one, "%s/one", ut_top);
	elog *w = open_zstd(one, 0);
	append_events(w, 0, 3000);
	UT_OK(elog_close(w), NULL);
	size_t n1, n2;
	unsigned char *d1 = ut_read_file(ut_path(p, sizeof p, one, "dict.1"), &n1);
	unsigned char *d2 = ut_read_file(ut_path(q, sizeof q, dir, "dict.1"), &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(d1, d2, n1);
	free(d1);
	free(d2);
}

/* Thirty handles, each opened for 100 events and closed: the log gets the
 * dictionary of its first 1000 values, as if one handle wrote them all. */
UT_TEST(short_lived_handles_train_from_the_logs_first_values)
{
	elog *w = open_zstd(ut_dir, 0);
	UT_OK(elog_close(w), NULL);
	for (int k = 0; k < 30; k++) {
		UT_OK(elog_open(&w, ut_dir, NULL), w);
		append_events(w, k * 100, 100);
		UT_OK(elog_close(w), NULL);
		char p[1200];
		/* Not before the log holds 1000 values. */
		ck_assert_int_eq(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")), k >= 9);
	}
	uint64_t base[4];
	uint32_t dict[4];
	ck_assert_uint_eq(segment_dicts(ut_dir, base, dict, 4), 2);
	ck_assert_uint_eq(base[0], 0);
	ck_assert_uint_eq(dict[0], 0);
	ck_assert_uint_eq(base[1], 999); /* the value that completed the set */
	ck_assert_uint_eq(dict[1], 1);
	same_dictionary_as_one_handle(ut_dir);
	read_all_events(3000);
}
END_TEST

/* Four handles open together, taking turns with 100 events each: none
 * appends 1000 values itself, and the log gets its dictionary all the
 * same. */
UT_TEST(handles_open_together_train_from_the_logs_first_values)
{
	elog *w[4];
	w[0] = open_zstd(ut_dir, 0);
	for (int k = 1; k < 4; k++)
		UT_OK(elog_open(&w[k], ut_dir, NULL), NULL);
	for (int turn = 0; turn < 12; turn++) {
		append_events(w[turn % 4], turn * 100, 100);
		UT_OK(elog_sync(w[turn % 4]), NULL);
	}
	/* The others go on with it. */
	for (int turn = 12; turn < 30; turn++) {
		append_events(w[turn % 4], turn * 100, 100);
		UT_OK(elog_sync(w[turn % 4]), NULL);
	}
	for (int k = 0; k < 4; k++)
		UT_OK(elog_close(w[k]), NULL);
	char p[1200];
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.2")));
	uint64_t base[8];
	uint32_t dict[8];
	size_t n = segment_dicts(ut_dir, base, dict, 8);
	ck_assert_uint_ge(n, 2);
	ck_assert_uint_eq(base[1], 999);
	ck_assert_uint_eq(dict[0], 0);
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_eq(dict[i], 1);
	same_dictionary_as_one_handle(ut_dir);
	read_all_events(3000);
}
END_TEST

/* Fewer than 1000 values (tombstones are not values) make no dictionary,
 * and writing goes on; the value that completes the set starts the
 * segment that names the dictionary. */
UT_TEST(too_few_values_make_no_dictionary_and_writing_goes_on)
{
	char p[1200];
	elog *w = open_zstd(ut_dir, 0);
	UT_OK(elog_close(w), NULL);
	for (int k = 0; k < 3; k++) {
		UT_OK(elog_open(&w, ut_dir, NULL), w);
		append_events(w, k * 333, 333);
		UT_OK(elog_close(w), NULL);
	}
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	UT_OK(elog_open(&w, ut_dir, NULL), w);
	for (int i = 0; i < 10; i++) {
		struct elog_record r = { .ts_ms = 1, .key = "gone", .key_len = 4 };
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	ck_assert_uint_eq(flags_of(0), SEG_FLAGS(CODEC_ZSTD, 0));

	UT_OK(elog_open(&w, ut_dir, NULL), w);
	append_events(w, 999, 1);
	UT_OK(elog_close(w), NULL);
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	uint64_t base[4];
	uint32_t dict[4];
	ck_assert_uint_eq(segment_dicts(ut_dir, base, dict, 4), 2);
	ck_assert_uint_eq(base[1], 1009);
	ck_assert_uint_eq(dict[1], 1);

	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	char v[256];
	for (int i = 0; i < 1010; i++) {
		UT_OK(elog_reader_next(r, &rec), r);
		size_t n = i < 999 ? event(v, sizeof v, i) : i < 1009 ? 0 : event(v, sizeof v, 999);
		ck_assert_uint_eq(rec.value_len, n);
		ck_assert_mem_eq(rec.value, v, n);
	}
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);
	elog_reader_close(r);
}
END_TEST

/* A value of n random bytes. */
static unsigned char *noise(size_t n, unsigned seed)
{
	unsigned char *b = malloc(n);
	ck_assert_ptr_nonnull(b);
	srand(seed);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)rand();
	return b;
}

/* Five values of 110,000 random bytes make a set by their size, and zstd
 * refuses to train on so few: the handle goes on without a dictionary and
 * tries no more, even once retention has removed them and the log's first
 * values would make one; a handle opened then tries again, and does. */
UT_TEST(a_handle_whose_training_failed_tries_no_more)
{
	char p[1200], msg[ELOG_MSG_MAX];
	elog *a = open_zstd(ut_dir, 128 * 1024);
	for (unsigned i = 0; i < 5; i++) {
		unsigned char *b = noise(110000, i + 1);
		struct elog_record r = { .ts_ms = 1, .value = b, .value_len = 110000 };
		UT_OK(elog_append(a, &r, NULL), a);
		free(b);
	}
	UT_OK(elog_sync(a), a);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	append_events(a, 0, 1000);
	UT_OK(elog_sync(a), a);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));

	/* Retention keeps the active segment only: events all. */
	struct elog_retain_opts o = { .max_age_ms = ELOG_RETAIN_OFF, .max_bytes = 1 };
	struct elog_retain_result res;
	int rc = elog_retain(ut_dir, &o, &res, msg);
	ck_assert_msg(rc == 0, "elog_retain: %d %s", rc, msg);
	ck_assert_uint_gt(res.start_after, 5);
	append_events(a, 1000, 1000);
	UT_OK(elog_sync(a), a);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));

	elog *b;
	UT_OK(elog_open(&b, ut_dir, NULL), b);
	append_events(b, 2000, 1);
	UT_OK(elog_close(b), NULL);
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	UT_OK(elog_close(a), NULL);
}
END_TEST

/* elog__train_first() itself: the log's values, then the batch's; the
 * record of the batch that completes the set; too few values. */
UT_TEST(train_first_reads_the_log_then_the_batch)
{
	struct elog_options o = { .create = 1,
		                  .compression = ELOG_COMPRESS_ZSTD,
		                  .no_dictionary = 1 };
	elog *w;
	UT_OK(elog_open(&w, ut_dir, &o), w);
	append_events(w, 0, 600);
	UT_OK(elog_close(w), NULL);
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.durable_end, 600);

	/* Events 600 .. 999 + 200 as a batch would hold them, with a
	 * tombstone first, in a segment without codec. */
	size_t cap = 1 << 20, len = 0;
	unsigned char *batch = malloc(cap);
	char v[256];
	struct elog_record tomb = { .offset = 600, .ts_ms = 1, .key = "k", .key_len = 1 };
	elog__rec_encode(batch, &tomb);
	len += elog__rec_size(1, 0);
	for (int i = 600; i < 1200; i++) {
		struct elog_record r = { .offset = (uint64_t)i + 1, .ts_ms = 1, .value = v };
		r.value_len = event(v, sizeof v, i);
		elog__rec_encode(batch + len, &r);
		len += elog__rec_size(0, r.value_len);
	}
	struct train_more more = { batch, len, 0 };

	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	const struct codec *c = elog__codec_for_flags(SEG_FLAGS(CODEC_ZSTD, 0));
	unsigned char dict[16384], want[16384];
	size_t dlen = 0, wlen = 0;
	struct train_result res;
	UT_OK(elog__train_first(dfd, c, wm.segment_base, wm.segment_bytes, &more, 1, dict,
	                        sizeof dict, &dlen, &res),
	      NULL);
	ck_assert_uint_eq(res.samples, 1000);
	ck_assert_uint_eq(res.split, 400); /* the tombstone, then 400 values */
	/* The same dictionary as the first 1000 events make. */
	unsigned char *all = malloc(cap);
	size_t sizes[1000], off = 0;
	for (int i = 0; i < 1000; i++) {
		sizes[i] = event((char *)all + off, 256, i);
		off += sizes[i];
	}
	UT_OK(elog__codec_train(c, all, sizes, 1000, want, sizeof want, &wlen), NULL);
	ck_assert_uint_eq(dlen, wlen);
	ck_assert_mem_eq(dict, want, dlen);

	/* Too few: the log's 600 and a batch of 300 (tombstone included). */
	size_t short_len = elog__rec_size(1, 0);
	for (int i = 600; i < 899; i++)
		short_len += elog__rec_size(0, event(v, sizeof v, i));
	more.len = short_len;
	UT_RC(elog__train_first(dfd, c, wm.segment_base, wm.segment_bytes, &more, 1, dict,
	                        sizeof dict, &dlen, &res),
	      ELOG_END, NULL);
	ck_assert_uint_eq(res.samples, 899);
	ck_assert_uint_eq(res.missing, 101);
	ck_assert_uint_eq(res.split, SIZE_MAX);
	/* Only the log's: read no further than the tail it is given. */
	UT_RC(elog__train_first(dfd, c, wm.segment_base, wm.segment_bytes - 1, NULL, 0, dict,
	                        sizeof dict, &dlen, &res),
	      ELOG_END, NULL);
	ck_assert_uint_eq(res.samples, 599);
	close(dfd);
	free(all);
	free(batch);
}
END_TEST

/* A segment whose header names a dictionary is passed over: before the
 * log's first dictionary there is none, unless one was deleted by hand,
 * and then its values cannot be read. */
UT_TEST(train_first_passes_over_segments_that_name_a_dictionary)
{
	make_trained_log(3000);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct watermark wm = ut_get_wm(ut_dir);
	const struct codec *c = elog__codec_for_flags(SEG_FLAGS(CODEC_ZSTD, 0));
	unsigned char dict[16384];
	size_t dlen;
	struct train_result res;
	UT_RC(elog__train_first(dfd, c, wm.segment_base, wm.segment_bytes, NULL, 0, dict,
	                        sizeof dict, &dlen, &res),
	      ELOG_END, NULL);
	ck_assert_uint_eq(res.samples, 999); /* segments from 999 on name dict 1 */
	close(dfd);
}
END_TEST

UT_TEST(compaction_keeps_values_encoded_and_merges_only_alike)
{
	/* 40 keys over many small segments: the first ones without a
	 * dictionary, the later ones with dictionary 1. */
	char v[256], k[16];
	elog *w = open_zstd(ut_dir, 8 * 1024);
	for (int i = 0; i < 4000; i++) {
		snprintf(k, sizeof k, "key-%02d", i % 40);
		struct elog_record r = { .ts_ms = 1, .key = k, .key_len = strlen(k), .value = v };
		r.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	char msg[ELOG_MSG_MAX];
	struct elog_compact_result res;
	ut_cleanup_compact(ut_dir);
	int rc = elog_compact(ut_dir, NULL, &res, msg);
	ck_assert_msg(rc == 0, "%d %s", rc, msg);
	ck_assert_uint_gt(res.segments_rewritten, 0);
	ck_assert_uint_lt(res.segments_after, res.segments_before);

	/* No segment mixes codecs or dictionaries... */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	int with = 0, without = 0;
	for (size_t i = 0; i < sl.n; i++) {
		uint32_t f = flags_of(sl.base[i]);
		ck_assert_uint_eq(SEG_CODEC(f), CODEC_ZSTD);
		with += SEG_DICT(f) == 1;
		without += SEG_DICT(f) == 0;
	}
	elog__seglist_free(&sl);
	close(dfd);
	ck_assert(with > 0 && without > 0);

	/* ...and every key's newest value reads back as written. */
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	int seen[40] = { 0 }, n = 0;
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		size_t len = event(v, sizeof v, (int)rec.offset);
		ck_assert_uint_eq(rec.value_len, len);
		ck_assert_mem_eq(rec.value, v, len);
		if (rec.offset >= 4000 - 40)
			seen[rec.offset % 40] = 1;
		n++;
	}
	ck_assert_int_eq(rc, ELOG_END);
	ck_assert_int_lt(n, 4000);
	for (int i = 0; i < 40; i++)
		ck_assert_msg(seen[i], "newest record of key %d missing", i);
	elog_reader_close(r);
}
END_TEST

/* A writer whose settings no longer compress goes on with the zstd tail
 * segment it finds, but every segment it starts is uncompressed, with no
 * dictionary, even after another writer moved the tail (which makes a
 * writer of a compressed log adopt the tail's dictionary). */
UT_TEST(a_writer_that_no_longer_compresses_starts_plain_segments)
{
	make_trained_log(3000);
	uint64_t tail = 0;
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	tail = sl.base[sl.n - 1];
	elog__seglist_free(&sl);
	ck_assert_uint_eq(flags_of(tail), SEG_FLAGS(CODEC_ZSTD, 1));

	char msg[ELOG_MSG_MAX];
	struct elog_settings o = { .compression = ELOG_COMPRESS_NONE };
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_COMPRESSION, 0, msg), msg);
	elog *a, *b;
	UT_OK(elog_open(&a, ut_dir, NULL), a);
	UT_OK(elog_open(&b, ut_dir, NULL), b);
	elog *ws[2] = { a, b };
	char v[256];
	int i = 3000;
	/* Turn by turn, so that the first flush of a turn finds the tail the
	 * other handle moved; the first turns write into the zstd tail. */
	for (int turn = 0; turn < 6; turn++) {
		int each = turn < 2 ? 1 : 400;
		for (int k = 0; k < each; k++, i++) {
			struct elog_record r = { .ts_ms = 1, .value = v };
			r.value_len = event(v, sizeof v, i);
			UT_OK(elog_append(ws[turn % 2], &r, NULL), NULL);
			if (k % 100 == 99 || k == each - 1)
				UT_OK(elog_sync(ws[turn % 2]), NULL);
		}
	}
	UT_OK(elog_close(a), NULL);
	UT_OK(elog_close(b), NULL);

	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_gt(sl.base[sl.n - 1], tail);
	for (size_t k = 0; k < sl.n; k++)
		if (sl.base[k] > tail)
			ck_assert_uint_eq(flags_of(sl.base[k]), 0);
	elog__seglist_free(&sl);
	close(dfd);
	read_all_events(i);
}
END_TEST

UT_TEST(missing_dictionary_is_a_clear_error)
{
	make_trained_log(2000);
	char p[1200];
	ck_assert_int_eq(unlink(ut_path(p, sizeof p, ut_dir, "dict.1")), 0);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	int rc;
	while ((rc = elog_reader_next(r, &rec)) == 0)
		;
	ck_assert_int_eq(rc, ELOG_CORRUPT);
	ck_assert_msg(strstr(elog_reader_errmsg(r), "dict.1: dictionary missing") != NULL, "%s",
	              elog_reader_errmsg(r));
	ck_assert_msg(strstr(elog_reader_errmsg(r), "00000000000000000999.log") != NULL, "%s",
	              elog_reader_errmsg(r));
	elog_reader_close(r);
	/* The writer needs it too, and says so. */
	elog *w;
	struct elog_options o = { 0 };
	UT_OK(elog_open(&w, ut_dir, &o), w);
	/* A dictionary trained now must not take the id of the missing one,
	 * which old segments still name. */
	char v[256];
	for (int i = 0; i < 2000; i++) {
		struct elog_record rr = { .ts_ms = 1, .value = v };
		rr.value_len = event(v, sizeof v, i);
		UT_OK(elog_append(w, &rr, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.2")));
}
END_TEST

UT_TEST(damaged_dictionary_is_a_clear_error)
{
	make_trained_log(2000);
	char p[1200];
	ut_flip_bit(ut_path(p, sizeof p, ut_dir, "dict.1"), 100, 3);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	int rc;
	while ((rc = elog_reader_next(r, &rec)) == 0)
		;
	ck_assert_int_eq(rc, ELOG_CORRUPT);
	ck_assert_msg(strstr(elog_reader_errmsg(r), "dict.1: damaged dictionary") != NULL, "%s",
	              elog_reader_errmsg(r));
	elog_reader_close(r);
	elog *w;
	UT_RC(elog_open(&w, ut_dir, NULL), ELOG_CORRUPT, w);
	ck_assert_str_eq(elog_errmsg(w), "dict.1: damaged dictionary");
	elog_close(w);
}
END_TEST

UT_TEST(a_damaged_frame_is_corrupt_not_a_crash)
{
	char msg[ELOG_MSG_MAX];
	const void *p;
	size_t len;
	uint32_t flags = SEG_FLAGS(CODEC_ZSTD, 0);
	struct vdec *d = elog__vdec_new();
	unsigned char bad[] = { TAG_ZSTD, 0xff, 0xff, 0xff, 0xff, 0xff };
	UT_RC(elog__vdec_value(d, -1, flags, bad, sizeof bad, &p, &len, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "bad zstd frame");
	unsigned char tag[] = { 7, 'x' };
	UT_RC(elog__vdec_value(d, -1, flags, tag, sizeof tag, &p, &len, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "unknown value encoding 7");
	elog__vdec_free(d);
}
END_TEST

#endif /* ELOG_HAVE_ZSTD */

UT_TEST(uncompressed_log_stays_uncompressed)
{
	elog *w = ut_open_writer(ut_dir, 4096, 0);
	ut_append(w, "k", "{\"a\":1}");
	UT_OK(elog_close(w), NULL);
	/* Asking for compression when opening an existing log is refused:
	 * it is a creation setting, and the log has another. */
	struct elog_options o = { 0 };
	o.compression = ELOG_COMPRESS_ZSTD;
	UT_RC(elog_open(&w, ut_dir, &o), ELOG_SETTING, w);
	elog_close(w);
	UT_OK(elog_open(&w, ut_dir, NULL), w);
	ck_assert_int_eq(elog_settings_of(w)->compression, ELOG_COMPRESS_NONE);
	for (int i = 0; i < 200; i++)
		ut_append(w, "k", "{\"a\":1,\"b\":\"some padding to fill segments\"}");
	UT_OK(elog_close(w), NULL);
	ck_assert(ut_exists(ut_seg_path(ut_dir, 1, SEG_EXT)) == 0);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_gt(sl.n, 1);
	for (size_t i = 0; i < sl.n; i++)
		ck_assert_uint_eq(flags_of(sl.base[i]), 0);
	elog__seglist_free(&sl);
	close(dfd);
}
END_TEST

/* A segment written by a zstd build: one raw-tagged value, then one
 * compressed value (a frame of "aaaa...", magic number removed). */
static void make_zstd_segment_by_hand(void)
{
	ut_make_settings(ut_dir, 1 << 20, 4096);
	unsigned char hdr[SEG_HDR];
	elog__seg_header_encode(hdr, 0, SEG_FLAGS(CODEC_ZSTD, 0), NULL);
	ut_write_file(ut_seg_path(ut_dir, 0, SEG_EXT), hdr, SEG_HDR);
	static const unsigned char raw[] = { TAG_RAW, 'h', 'i' };
	static const unsigned char frame[] = { TAG_ZSTD, 0x20, 0x40, 0x45, 0x00, 0x00, 0x10,
		                               0x61,     0x61, 0x01, 0x00, 0x93, 0x00, 0x16 };
	struct elog_record a = { .offset = 0, .ts_ms = 1, .value = raw, .value_len = sizeof raw };
	struct elog_record b = { .offset = 1,
		                 .ts_ms = 2,
		                 .value = frame,
		                 .value_len = sizeof frame };
	ut_append_rec(ut_seg_path(ut_dir, 0, SEG_EXT), &a);
	ut_append_rec(ut_seg_path(ut_dir, 0, SEG_EXT), &b);
	uint64_t end = ut_file_size(ut_seg_path(ut_dir, 0, SEG_EXT));
	ut_set_wm(ut_dir, 2, 0, end);
}

UT_TEST(a_segment_compressed_by_hand_reads_as_documented)
{
	make_zstd_segment_by_hand();
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.value_len, 2);
	ck_assert_mem_eq(rec.value, "hi", 2);
	int rc = elog_reader_next(r, &rec);
#ifdef ELOG_HAVE_ZSTD
	ck_assert_msg(rc == 0, "%d %s", rc, elog_reader_errmsg(r));
	ck_assert_uint_eq(rec.value_len, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(((const unsigned char *)rec.value)[i], 'a');
#else
	/* Without zstd: a clear error naming the segment, never garbage. */
	ck_assert_int_eq(rc, ELOG_UNSUPPORTED);
	ck_assert_str_eq(elog_reader_errmsg(r),
	                 "00000000000000000000.log: record at byte 63: "
	                 "compressed with zstd, but this build has no zstd support");
#endif
	elog_reader_close(r);
}
END_TEST

#ifndef ELOG_HAVE_ZSTD
UT_TEST(creating_a_compressed_log_needs_zstd)
{
	struct elog_options o = { 0 };
	elog *w;
	o.create = 1;
	o.compression = ELOG_COMPRESS_ZSTD;
	UT_RC(elog_open(&w, ut_dir, &o), ELOG_UNSUPPORTED, w);
	ck_assert_str_eq(elog_errmsg(w), "this build has no zstd support");
	elog_close(w);
}
END_TEST
#endif

Suite *suite(void);
Suite *suite(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = ut_tcase("compress");
	tcase_set_timeout(tc, 120);
#ifndef ELOG_HAVE_ZSTD
	/* Visible in the output: what this build cannot test. */
	fprintf(stderr, "test_compress: SKIPPED 17 zstd tests: built without zstd\n");
#endif
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return ut_run(suite());
}
