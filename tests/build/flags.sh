#!/bin/sh
# tests/build/flags.sh: a build never links objects compiled with other
# flags.  `make all`, a source touched, then `make all` with HAVE_ZSTD=0 in
# the environment must build into the directory named for those flags and
# link; and with one B given to both builds, the flags recorded in B make
# the second build compile everything again.  Runs in a scratch copy of the
# sources (the tree's own build directories are left alone), at -O0.
# Exit 0 when every build linked as it should, 1 otherwise.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/elog-flags.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -R "$top/Makefile" "$top/mk" "$top/lib" "$top/bin" "$top/elog.pc.in" "$tmp/"
cd "$tmp"

# The calling make's variables (MAKEFLAGS carries its command line) and the
# flags of the environment would choose the builds below: drop them.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u B -u HAVE_ZSTD -u SANITIZE \
		-u CFLAGS "$@" make -s -j2 CFLAGS=-O0 all >build.log 2>&1 ||
		{ cat build.log; fail "$* make all did not build"; }
}
fail() {
	echo "flags.sh: $*" >&2
	exit 1
}
# $1: directory; $2: 1 if its library must call zstd, 0 if it must not.
zstd_calls() {
	n=$(nm "$1/libelog.a" | grep -c ' U ZSTD_' || true)
	if [ "$2" = 1 ]; then [ "$n" -gt 0 ]; else [ "$n" -eq 0 ]; fi ||
		fail "$1/libelog.a: $n calls to zstd, expected $([ "$2" = 1 ] && echo some || echo none)"
	for p in elog-append elog-cat elog-verify; do
		[ -x "$1/$p" ] || fail "$1/$p was not linked"
	done
}
have=$(pkg-config --exists libzstd 2>/dev/null && echo 1 || echo 0)

mk
first=$(env -u MAKEFLAGS -u HAVE_ZSTD -u SANITIZE -u B make -s builddir)
zstd_calls "$first" "$have"
touch lib/writer.c
mk HAVE_ZSTD=0
second=$(env -u MAKEFLAGS -u SANITIZE -u B HAVE_ZSTD=0 make -s builddir)
[ "$second" = build-nozstd ] || fail "HAVE_ZSTD=0 builds into $second, not build-nozstd"
zstd_calls "$second" 0
san=$(env -u MAKEFLAGS -u B make -s builddir SANITIZE=1 HAVE_ZSTD=0)
[ "$san" = build-san-nozstd ] || fail "SANITIZE=1 HAVE_ZSTD=0 builds into $san"
if [ "$have" = 0 ]; then
	echo "flags.sh: no zstd here: the build of one B with and without it is not tested"
	exit 0
fi
[ "$first" = build ] || fail "the default build goes to $first, not build"
zstd_calls build 1

# One directory for both builds: the second must not reuse the objects.
# The first is the default build above, in build/ (given B=build, the
# build without zstd goes there too and must compile everything again).
grep -q zstd build/elog.pc || fail "build/elog.pc does not name zstd"
touch lib/writer.c
mk B=build HAVE_ZSTD=0
zstd_calls build 0
! grep -q zstd build/elog.pc || fail "build/elog.pc still names zstd"
echo "flags.sh: builds of other flags did not mix: $first, $second, and both in build"
