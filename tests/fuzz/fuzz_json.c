/*
 * fuzz_json: bin/json.c, the JSON that elog-append --json reads from
 * standard input, over arbitrary bytes.  The parsers must never read out
 * of bounds, and what they accept must hold together:
 *
 *   - cli_json_compact(): the compact text is no longer than the input,
 *     is valid UTF-8, and compacts to itself;
 *   - cli_json_object(): each member's name and value lie inside the
 *     input, each value is one JSON value, each name a string whose
 *     decoded bytes are no longer than it;
 *   - cli_json_string() and cli_base64() (the writers of elog-cat's
 *     output) read back, through cli_json_string_decode() and
 *     cli_base64_decode(), as the bytes they were given.
 *
 * The writers print on standard output: it is an anonymous file here,
 * read back after each input.
 */
#include "fuzz.h"
#include "cli.h"

/* Standard output as an anonymous file, emptied. */
static void out_reset(void)
{
	static int ready;
	if (!ready) {
		int fd = memfd_create("stdout", MFD_CLOEXEC);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			abort();
		close(fd);
		ready = 1;
	}
	if (ftruncate(STDOUT_FILENO, 0) != 0 || lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
}

/* What was written on standard output since out_reset(), in a buffer of
 * the caller's to free. */
static char *out_take(size_t *len)
{
	cli_flush();
	off_t end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
	char *buf = malloc((size_t)end + 1);
	if (end < 0 || !buf || pread(STDOUT_FILENO, buf, (size_t)end, 0) != end)
		abort();
	*len = (size_t)end;
	return buf;
}

static int inside(const uint8_t *data, size_t size, const char *p, size_t n)
{
	return p >= (const char *)data && n <= size && p + n <= (const char *)data + size;
}

static void check_compact(const uint8_t *data, size_t size)
{
	char *out = malloc(size + 1), *again = malloc(size + 1);
	const char *res, *res2;
	size_t n, n2;
	if (!out || !again)
		abort();
	if (cli_json_compact(data, size, out, &res, &n) == 0) {
		if (n > size || !cli_utf8_valid(res, n))
			abort();
		if (cli_json_compact(res, n, again, &res2, &n2) != 0 || n2 != n ||
		    memcmp(res2, res, n) != 0)
			abort();
	}
	free(out);
	free(again);
}

static void check_object(const uint8_t *data, size_t size)
{
	struct cli_jmember m[64];
	size_t n;
	if (cli_json_object(data, size, m, 64, &n) != 0)
		return;
	if (n > 64)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!inside(data, size, m[i].name, m[i].name_len) ||
		    !inside(data, size, m[i].value, m[i].len) || m[i].name_len < 2 ||
		    m[i].name[0] != '"')
			abort();
		char *buf = malloc(m[i].name_len + m[i].len + 1);
		const char *res;
		size_t blen;
		if (!buf)
			abort();
		if (cli_json_string_decode(m[i].name, m[i].name_len, buf) > m[i].name_len)
			abort();
		if (cli_json_compact(m[i].value, m[i].len, buf, &res, &blen) != 0)
			abort();
		(void)cli_json_name_is(&m[i], "value");
		free(buf);
	}
}

/* The string writer and its reader agree, for bytes that are UTF-8. */
static void check_string_round_trip(const uint8_t *data, size_t size)
{
	if (!cli_utf8_valid(data, size))
		return;
	out_reset();
	cli_json_string(data, size);
	size_t len;
	char *text = out_take(&len);
	char *back = malloc(len + 1), *cbuf = malloc(len + 1);
	const char *res;
	size_t n;
	if (!back || !cbuf || cli_json_compact(text, len, cbuf, &res, &n) != 0 || n != len)
		abort();
	n = cli_json_string_decode(text, len, back);
	if (n != size || memcmp(back, data, size) != 0)
		abort();
	free(text);
	free(back);
	free(cbuf);
}

/* base64: what is written reads back; what reads back is written again
 * as it was read when it was canonical. */
static void check_base64(const uint8_t *data, size_t size)
{
	out_reset();
	cli_base64(data, size);
	size_t len, n;
	char *text = out_take(&len);
	unsigned char *back = malloc(len / 4 * 3 + 1);
	if (!back || cli_base64_decode(text, len, back, &n) != 0 || n != size ||
	    memcmp(back, data, size) != 0)
		abort();
	free(text);
	free(back);
	back = malloc(size / 4 * 3 + 1);
	if (!back)
		abort();
	if (cli_base64_decode((const char *)data, size, back, &n) == 0 && n > size / 4 * 3)
		abort();
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A line of elog-append --json can be large; the parsers' cost is
	 * linear, and larger inputs only slow the search. */
	if (size > 1 << 16)
		return 0;
	check_compact(data, size);
	check_object(data, size);
	check_string_round_trip(data, size);
	check_base64(data, size);
	return 0;
}
