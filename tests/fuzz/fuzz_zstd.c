/*
 * fuzz_zstd: decoding a stored value of a compressed segment (tag byte and
 * a zstd frame without its magic number) and a dictionary file, from
 * arbitrary bytes.  The first input byte chooses: even = a value decoded
 * without a dictionary, odd = the rest is written as dict.1 and a fixed
 * compressed value is decoded with it.  A build without zstd checks that
 * every compressed value is refused cleanly.
 */
#include "fuzz.h"

volatile unsigned fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int dfd = -1;
	char msg[ELOG_MSG_MAX];
	const void *out;
	size_t len;
	if (size == 0)
		return 0;
	if (dfd < 0 && (dfd = open(fuzz_dir(), O_RDONLY | O_DIRECTORY)) < 0)
		abort();
	struct vdec *z = elog__vdec_new();
	if (!z)
		abort();
	int rc;
	if (data[0] % 2 == 0) {
		rc = elog__vdec_value(z, dfd, SEG_FLAGS(CODEC_ZSTD, 0), data + 1, size - 1, &out,
		                      &len, msg);
	} else {
		fuzz_put(dfd, "dict.1", data + 1, size - 1);
		static const unsigned char v[] = { TAG_ZSTD, 0x20, 0x40, 0x45, 0x00, 0x00, 0x10,
			                           0x61,     0x61, 0x01, 0x00, 0x93, 0x00, 0x16 };
		rc = elog__vdec_value(z, dfd, SEG_FLAGS(CODEC_ZSTD, 1), v, sizeof v, &out, &len,
		                      msg);
	}
	if (rc == 0) {
		if (len > ELOG_MAX_RECORD)
			abort();
		for (size_t i = 0; i < len; i++)
			fuzz_sink += ((const unsigned char *)out)[i];
	} else if (rc != ELOG_CORRUPT && rc != ELOG_UNSUPPORTED && rc != ENOMEM) {
		abort();
	}
	elog__vdec_free(z);
	return 0;
}
