#!/bin/sh
# tests/cross/run.sh: the aarch64 CRC-32C code, built with a cross compiler
# and run under qemu, checked against the portable table on the same
# emulated CPU.  Skips (visibly) where the tools are not installed:
#   apt-get install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
set -eu
cd "$(dirname "$0")/../.."
CC=aarch64-linux-gnu-gcc
if ! command -v "$CC" >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
	echo "cross: SKIPPED aarch64 CRC-32C test: $CC or qemu-aarch64 not installed"
	exit 0
fi
out=${B:-build}/cross
mkdir -p "$out"
"$CC" -static -O2 -std=c11 -D_GNU_SOURCE -Ilib -Wall -Wextra -Werror \
	-o "$out/crc32c_check" tests/cross/crc32c_check.c lib/crc32c.c -pthread
table=$(ELOG_CRC32C=table qemu-aarch64 -cpu max "$out/crc32c_check")
hw=$(qemu-aarch64 -cpu max "$out/crc32c_check" "${table#table }")
case $hw in
armv8-crc*) ;;
*) echo "cross: the hardware CRC was not chosen on an ARMv8 CPU with CRC: $hw"; exit 1 ;;
esac
echo "cross: aarch64 CRC-32C: $hw, table: $table"
