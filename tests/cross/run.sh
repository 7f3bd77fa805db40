#!/bin/sh
# tests/cross/run.sh: the CRC-32C code against its own portable table, on
# this CPU and (built with a cross compiler, run under qemu) on aarch64.
# The aarch64 half skips, visibly, where the tools are not installed:
#   apt-get install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
set -eu
cd "$(dirname "$0")/../.."
out=${B:-$(${MAKE:-make} -s --no-print-directory builddir)}/cross
mkdir -p "$out"
FLAGS="-O2 -std=c11 -D_GNU_SOURCE -Ilib -Wall -Wextra -Werror"

# $1: how to run the program; the rest: how to build it.
check() {
	run=$1
	shift
	# shellcheck disable=SC2086 # FLAGS is a list of words
	"$@" $FLAGS -o "$out/crc32c_check" tests/cross/crc32c_check.c lib/crc32c.c -pthread
	hw=$($run "$out/crc32c_check")
	case $hw in
	table*) echo "cross: no hardware CRC-32C on this CPU: $hw" ;;
	*) echo "cross: CRC-32C $hw" ;;
	esac
}

check "" "${CC:-cc}"
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
	echo "cross: SKIPPED aarch64 CRC-32C test: aarch64-linux-gnu-gcc or qemu-aarch64 not installed"
	exit 0
fi
check "qemu-aarch64 -cpu max" aarch64-linux-gnu-gcc -static
case $hw in
armv8-crc*) ;;
*) echo "cross: the hardware CRC was not chosen on an ARMv8 CPU with CRC: $hw"; exit 1 ;;
esac
