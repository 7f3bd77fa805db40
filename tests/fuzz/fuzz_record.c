/*
 * fuzz_record: elog__rec_decode() over arbitrary bytes.  A record it accepts must
 * lie wholly inside the input, and its key and value inside the record.
 */
#include "fuzz.h"

/* Where the bytes read go, so that the reads are not optimised away. */
volatile unsigned fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elog_record rec;
	size_t len;
	if (elog__rec_decode(data, size, &rec, &len) != 0)
		return 0;
	if (len > size || len < REC_PREFIX + REC_FIXED - 4 ||
	    (const uint8_t *)rec.key != data + REC_HDR ||
	    REC_HDR + rec.key_len + rec.value_len != len)
		abort();
	/* Touch every byte handed out, for ASan to see. */
	for (size_t i = 0; i < rec.key_len; i++)
		fuzz_sink += ((const unsigned char *)rec.key)[i];
	for (size_t i = 0; i < rec.value_len; i++)
		fuzz_sink += ((const unsigned char *)rec.value)[i];
	return 0;
}
