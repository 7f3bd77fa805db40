/*
 * json.c: JSON output for the programs: a strict UTF-8 check, a JSON string
 * writer, base64 for bytes that are not text, and a strict RFC 8259 parser
 * that also makes a compact copy of the text it accepts, so that a value
 * holding a pretty-printed object still fits on one JSON line.
 */
#include <stdint.h>
#include <string.h>

#include "cli.h"

/* Length of the UTF-8 sequence at s, or 0 when it is not one.  Overlong
 * forms, UTF-16 surrogates (U+D800..U+DFFF) and code points above U+10FFFF
 * are refused (RFC 3629), since a JSON reader would reject or mangle them. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *end)
{
	unsigned c = s[0], lo = 0x80, hi = 0xBF;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

int cli_utf8_valid(const void *buf, size_t len)
{
	const unsigned char *s = buf, *end = s + len;

	while (s < end) {
		uint64_t w;
		size_t n;

		/* Most keys and values are ASCII: test eight bytes at once. */
		if (end - s >= 8) {
			memcpy(&w, s, 8);
			if ((w & 0x8080808080808080ull) == 0) {
				s += 8;
				continue;
			}
		}
		n = utf8_seq(s, end);
		if (n == 0)
			return 0;
		s += n;
	}
	return 1;
}

/* How each byte goes into a JSON string: 0, as it is; else the letter after
 * the backslash, 'u' for the control characters without a short escape
 * (RFC 8259, section 7). */
static const char escape_as[256] = {
	[0x00 ... 0x07] = 'u', ['\b'] = 'b', ['\t'] = 't',          ['\n'] = 'n', [0x0b] = 'u',
	['\f'] = 'f',          ['\r'] = 'r', [0x0e ... 0x1f] = 'u', ['"'] = '"',  ['\\'] = '\\',
};

/* Escape n bytes of s at o, which has room for 6 * n; the end. */
static char *escape_into(char *o, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *end = s + n;
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;

	while (s < end) {
		/* Eight plain bytes at a time: copy them whole, and keep
		 * them when none is a control byte, '"' or '\\'.  Bytes of
		 * multi-byte characters are plain here. */
		if (end - s >= 8) {
			uint64_t x, q, b;

			memcpy(&x, s, 8);
			memcpy(o, &x, 8);
			q = x ^ (ones * '"');
			b = x ^ (ones * '\\');
			if ((((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x & high) == 0) {
				s += 8;
				o += 8;
				continue;
			}
		}
		for (const unsigned char *stop = end - s >= 8 ? s + 8 : end; s < stop; s++) {
			char e = escape_as[*s];

			if (e == 0) {
				*o++ = (char)*s;
			} else if (e != 'u') {
				o[0] = '\\';
				o[1] = e;
				o += 2;
			} else {
				memcpy(o, "\\u00", 4);
				o[4] = hex[*s >> 4];
				o[5] = hex[*s & 15];
				o += 6;
			}
		}
	}
	return o;
}

void cli_json_string(const void *buf, size_t len)
{
	/* Input pieces small enough that their worst case (six bytes out for
	 * each in, and the quotes) fits the output buffer. */
	const size_t piece = (CLI_RESERVE_MAX - 2) / 6;
	const unsigned char *s = buf;
	char *o = cli_reserve((len < piece ? len : piece) * 6 + 2);

	*o++ = '"';
	for (;;) {
		size_t n = len < piece ? len : piece;

		o = escape_into(o, s, n);
		s += n;
		len -= n;
		if (len == 0)
			break;
		cli_commit(o);
		o = cli_reserve((len < piece ? len : piece) * 6 + 1);
	}
	*o++ = '"';
	cli_commit(o);
}

void cli_base64(const void *buf, size_t len)
{
	static const char alphabet[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = buf;
	char q[4];
	size_t i;

	for (i = 0; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		q[0] = alphabet[v >> 18];
		q[1] = alphabet[v >> 12 & 63];
		q[2] = alphabet[v >> 6 & 63];
		q[3] = alphabet[v & 63];
		cli_write(q, 4);
	}
	if (i < len) {
		uint32_t v = (uint32_t)s[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)s[i + 1] << 8;
		q[0] = alphabet[v >> 18];
		q[1] = alphabet[v >> 12 & 63];
		q[2] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
		q[3] = '=';
		cli_write(q, 4);
	}
}

/*
 * The parser.  A recursive descent over the grammar of RFC 8259 that copies
 * every byte outside white space to the output, which therefore never needs
 * more room than the input.  Nesting is limited (CLI_JSON_MAX_DEPTH) so that
 * the stack is bounded and jq(1), which has a depth limit of its own, can
 * read every line this program embeds a value in.
 */

struct jparse {
	const unsigned char *p, *end;
	char *out; /* the compact copy, or NULL: only check */
	int depth;
	int ws; /* white space was skipped somewhere */
};

static void skip_ws_run(struct jparse *j)
{
	const unsigned char *from = j->p;
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
	j->ws |= j->p != from;
}

/* Compact JSON has no white space: the usual case is one inlined test. */
static inline void skip_ws(struct jparse *j)
{
	if (j->p == j->end || *j->p <= ' ')
		skip_ws_run(j);
}

static void copy(struct jparse *j, size_t n)
{
	if (j->out) {
		memcpy(j->out, j->p, n);
		j->out += n;
	}
	j->p += n;
}

/* Bytes that stand for themselves inside a string: printable ASCII but the
 * quote and the backslash.  A table makes the common case one load. */
static const unsigned char plain_byte[256] = {
	[0x20] = 1,
	[0x21] = 1,
	/* 0x22 '"' */ [0x23 ... 0x5b] = 1,
	/* 0x5c '\\' */ [0x5d ... 0x7f] = 1,
};

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code unit of a backslash-u escape (four hex digits) at p, or -1. */
static long u_escape(const unsigned char *p, const unsigned char *end)
{
	long v = 0;

	if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
		return -1;
	for (int i = 2; i < 6; i++) {
		int h = hex_value(p[i]);

		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* The grammar allows a lone surrogate escape such as "\ud800", but it
 * stands for no character and readers replace or reject it, so such a text
 * is refused here and shown as a string instead of being embedded. */
static int parse_string(struct jparse *j)
{
	copy(j, 1);
	for (;;) {
		const unsigned char *run = j->p;
		size_t n;

		/* Eight bytes at a time while none is special: a control
		 * byte, a byte of a multi-byte character, '"' or '\\'. */
		while (j->end - j->p >= 8) {
			uint64_t x;
			memcpy(&x, j->p, 8);
			const uint64_t ones = 0x0101010101010101ull, high = ones << 7;
			uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
			/* The high bit of each special byte; a borrow can
			 * mark bytes after the first one, never before it,
			 * so the lowest mark is exact (little endian). */
			uint64_t m = ((((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x) | x) &
			             high;
			if (m != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				j->p += (unsigned)__builtin_ctzll(m) / 8;
#endif
				break;
			}
			j->p += 8;
		}
		while (j->p < j->end && plain_byte[*j->p])
			j->p++;
		if (j->out) {
			memcpy(j->out, run, (size_t)(j->p - run));
			j->out += j->p - run;
		}
		if (j->p == j->end || *j->p < 0x20)
			return -1;
		if (*j->p == '"') {
			copy(j, 1);
			return 0;
		}
		if (*j->p == '\\') {
			long u;

			if (j->end - j->p < 2)
				return -1;
			if (strchr("\"\\/bfnrt", j->p[1]) != NULL && j->p[1] != '\0') {
				copy(j, 2);
				continue;
			}
			u = u_escape(j->p, j->end);
			if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
				return -1;
			if (u >= 0xD800 && u <= 0xDBFF) {
				long lo = u_escape(j->p + 6, j->end);

				if (lo < 0xDC00 || lo > 0xDFFF)
					return -1;
				copy(j, 12);
			} else {
				copy(j, 6);
			}
			continue;
		}
		n = utf8_seq(j->p, j->end);
		if (n == 0)
			return -1;
		copy(j, n);
	}
}

static int parse_digits(struct jparse *j)
{
	const unsigned char *start = j->p;

	while (j->p < j->end && is_digit(*j->p))
		j->p++;
	return j->p > start ? 0 : -1;
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int parse_number(struct jparse *j)
{
	const unsigned char *start = j->p;
	size_t n;

	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (parse_digits(j) < 0)
		return -1;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (parse_digits(j) < 0)
			return -1;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (parse_digits(j) < 0)
			return -1;
	}
	n = (size_t)(j->p - start);
	if (j->out) {
		memcpy(j->out, start, n);
		j->out += n;
	}
	return 0;
}

static int parse_literal(struct jparse *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return -1;
	copy(j, n);
	return 0;
}

static int parse_value(struct jparse *j);

/* An object or an array: open, members separated by commas, close.  In an
 * object each member is a string, a colon and a value. */
static int parse_container(struct jparse *j)
{
	int object = *j->p == '{';
	unsigned char close = object ? '}' : ']';

	if (++j->depth > CLI_JSON_MAX_DEPTH)
		return -1;
	copy(j, 1);
	skip_ws(j);
	if (j->p < j->end && *j->p == close) {
		copy(j, 1);
		j->depth--;
		return 0;
	}
	for (;;) {
		if (object) {
			if (j->p == j->end || *j->p != '"' || parse_string(j) < 0)
				return -1;
			skip_ws(j);
			if (j->p == j->end || *j->p != ':')
				return -1;
			copy(j, 1);
		}
		if (parse_value(j) < 0)
			return -1;
		if (j->p == j->end)
			return -1;
		if (*j->p == close) {
			copy(j, 1);
			j->depth--;
			return 0;
		}
		if (*j->p != ',')
			return -1;
		copy(j, 1);
		skip_ws(j);
	}
}

/* A value with the white space around it. */
static int parse_value(struct jparse *j)
{
	int rc;

	skip_ws(j);
	if (j->p == j->end)
		return -1;
	switch (*j->p) {
	case '{':
	case '[':
		rc = parse_container(j);
		break;
	case '"':
		rc = parse_string(j);
		break;
	case 't':
		rc = parse_literal(j, "true");
		break;
	case 'f':
		rc = parse_literal(j, "false");
		break;
	case 'n':
		rc = parse_literal(j, "null");
		break;
	default:
		rc = *j->p == '-' || is_digit(*j->p) ? parse_number(j) : -1;
		break;
	}
	skip_ws(j);
	return rc;
}

int cli_json_compact(const void *in, size_t len, char *out, const char **res, size_t *res_len)
{
	struct jparse j = { in, (const unsigned char *)in + len, NULL, 0, 0 };

	/* Most values are compact already: check first, and copy without the
	 * white space only when there was some. */
	if (parse_value(&j) < 0 || j.p != j.end)
		return -1;
	if (!j.ws) {
		*res = in;
		*res_len = len;
		return 0;
	}
	j = (struct jparse){ in, (const unsigned char *)in + len, out, 0, 0 };
	parse_value(&j);
	*res = out;
	*res_len = (size_t)(j.out - out);
	return 0;
}

/*
 * Reading JSON lines back (elog-append --json): the members of one object,
 * the bytes of a string, and base64.
 */

int cli_json_object(const void *in, size_t len, struct cli_jmember *m, size_t max, size_t *n)
{
	struct jparse j = { in, (const unsigned char *)in + len, NULL, 0, 0 };

	*n = 0;
	skip_ws(&j);
	if (j.p == j.end || *j.p != '{')
		return -1;
	j.p++;
	j.depth = 1;
	skip_ws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
	} else {
		for (;;) {
			const unsigned char *name = j.p, *value;

			if (j.p == j.end || *j.p != '"' || parse_string(&j) < 0)
				return -1;
			size_t name_len = (size_t)(j.p - name);
			skip_ws(&j);
			if (j.p == j.end || *j.p != ':')
				return -1;
			j.p++;
			skip_ws(&j);
			value = j.p;
			if (parse_value(&j) < 0)
				return -1;
			if (*n == max)
				return -2;
			/* parse_value() took the white space after the value
			 * too: the value ends at the last byte that is not. */
			const unsigned char *vend = j.p;
			while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t' ||
			                        vend[-1] == '\n' || vend[-1] == '\r'))
				vend--;
			m[*n].name = (const char *)name;
			m[*n].name_len = name_len;
			m[*n].value = (const char *)value;
			m[*n].len = (size_t)(vend - value);
			(*n)++;
			if (j.p == j.end)
				return -1;
			if (*j.p == '}') {
				j.p++;
				break;
			}
			if (*j.p != ',')
				return -1;
			j.p++;
			skip_ws(&j);
		}
	}
	skip_ws(&j);
	return j.p == j.end ? 0 : -1;
}

int cli_json_name_is(const struct cli_jmember *m, const char *name)
{
	size_t n = strlen(name);

	/* Member names of elog-cat's lines are plain ASCII: one written
	 * with escapes is not one of them. */
	return m->name_len == n + 2 && memcmp(m->name + 1, name, n) == 0;
}

/* Write code point c as UTF-8 at out; the number of bytes. */
static size_t utf8_put(char *out, unsigned long c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xC0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xE0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3F));
		out[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3F));
	out[2] = (char)(0x80 | (c >> 6 & 0x3F));
	out[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

size_t cli_json_string_decode(const char *in, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)in + 1;
	const unsigned char *end = (const unsigned char *)in + len - 1;
	char *o = out;

	while (p < end) {
		if (*p != '\\') {
			*o++ = (char)*p++;
			continue;
		}
		switch (p[1]) {
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u': {
			/* Checked by the parser: a pair when it is a high
			 * surrogate. */
			unsigned long c = (unsigned long)u_escape(p, end);

			if (c >= 0xD800 && c <= 0xDBFF) {
				unsigned long lo = (unsigned long)u_escape(p + 6, end);

				c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
				p += 6;
			}
			o += utf8_put(o, c);
			p += 6;
			continue;
		}
		default:
			*o++ = (char)p[1];
			break; /* " \ / */
		}
		p += 2;
	}
	return (size_t)(o - out);
}

int cli_base64_decode(const char *in, size_t len, unsigned char *out, size_t *out_len)
{
	size_t o = 0;

	if (len % 4 != 0)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v = 0;
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)in[i + k];
			int d;

			if (c >= 'A' && c <= 'Z')
				d = c - 'A';
			else if (c >= 'a' && c <= 'z')
				d = c - 'a' + 26;
			else if (c >= '0' && c <= '9')
				d = c - '0' + 52;
			else if (c == '+')
				d = 62;
			else if (c == '/')
				d = 63;
			else if (c == '=' && i + 4 == len && k >= 2)
				d = -1;
			else
				return -1;
			/* Padding only at the end, and nothing after it. */
			if (d < 0)
				pad++;
			else if (pad)
				return -1;
			v = v << 6 | (uint32_t)(d < 0 ? 0 : d);
		}
		out[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)v;
		/* The bits the padding leaves over must be zero, as an
		 * encoder writes them, so that each text has one reading. */
		if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF)))
			return -1;
	}
	*out_len = o;
	return 0;
}
