/*
 * internal.h: the map of libelog's layers, and every private header in one
 * include for the tests and fuzzers.  A file of lib/ never includes it: it
 * includes the headers it uses.  Nothing here is installed.
 *
 * The layers, lowest first.  A file calls only files of its own layer or
 * the layers above it on this list, and a header includes only headers of
 * the layers above its own: `make check-layers` holds every object to
 * tests/layers/order and every header to tests/layers/headers.
 *
 *   layer           headers            files
 *   pure code       base.h             crc32c buf errors timestamp
 *                   format.h           (the constants of elog(5))
 *                   encoding.h         record lockstate, and the encoders
 *                                      and decoders of segment.c index.c
 *                                      watermark.c start.c
 *   POSIX           os.h               fsutil holders lock
 *   codecs          compress.h         compress
 *   elog(5) files   files.h            lastrun holes start segment files
 *                   consumers_json.h   watermark scan index settings
 *                                      consumers_json losses train
 *   write and read  writer.h           recover create writer
 *                   reader.h           reader+follow consumers
 *   maintenance     maint.h            maintstep keyset maint salvage
 *                                      compact retain
 *   verification    verify.h           damage repair verify
 *   summary                            summary
 *
 * elog.h, the public interface, is below them all.  reader.c and follow.c
 * are one object in two files (reader.h): the reader calls follow.c to
 * wait and drain, follow.c calls back for the segment list; they are the
 * one pair allowed to call each other.
 */
#ifndef ELOG_INTERNAL_H
#define ELOG_INTERNAL_H

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"
#include "consumers_json.h"
#include "writer.h"
#include "maint.h"
#include "verify.h"

#endif
