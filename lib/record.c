/*
 * record.c: one record on disk.
 *
 *   length u32 | crc32c u32 | offset u64 | ts_ms i64 | schema u16 |
 *   key_len u16 | key | value
 *
 * length counts every byte after the length field (REC_FIXED + key_len +
 * value_len); the CRC covers every byte after the crc field.
 */
#include <string.h>

#include "base.h"
#include "format.h"
#include "encoding.h"

size_t elog__rec_size(size_t key_len, size_t value_len)
{
	return REC_PREFIX - 4 + REC_FIXED + key_len + value_len;
}

size_t elog_record_size(size_t key_len, size_t value_len)
{
	return elog__rec_size(key_len, value_len);
}

const unsigned char *elog__rec_bytes(const struct elog_record *rec)
{
	return (const unsigned char *)rec->key - REC_HDR;
}

void elog__rec_encode(unsigned char *p, const struct elog_record *rec)
{
	size_t len = REC_FIXED + rec->key_len + rec->value_len;
	put32(p, (uint32_t)len);
	put64(p + REC_AT_OFFSET, rec->offset);
	put64(p + REC_AT_TS, (uint64_t)rec->ts_ms);
	put16(p + REC_AT_SCHEMA, rec->schema);
	put16(p + REC_AT_KEY_LEN, (uint16_t)rec->key_len);
	if (rec->key_len)
		memcpy(p + REC_HDR, rec->key, rec->key_len);
	if (rec->value_len)
		memcpy(p + REC_HDR + rec->key_len, rec->value, rec->value_len);
	put32(p + REC_AT_CRC, elog__crc32c(0, p + REC_PREFIX, len - 4));
}

int elog__rec_decode(const unsigned char *p, size_t avail, struct elog_record *rec, size_t *size)
{
	int err = elog__rec_frame(p, avail);
	if (err)
		return err;
	uint32_t len = get32(p);
	if (get32(p + REC_AT_CRC) != elog__crc32c(0, p + REC_PREFIX, len - 4))
		return ELOG_CORRUPT;
	*size = elog__rec_fields(p, rec);
	return 0;
}
