#!/usr/bin/env bats
# make install and make uninstall of the build under test (ELOG_BIN, the
# build directory): the layout, a program built against the installed copy
# with pkg-config, and an uninstall that leaves no file behind; once into a
# DESTDIR as a package build does it, once straight into a PREFIX.

load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PROGRAMS="elog-append elog-cat elog-commit elog-compact elog-retain elog-verify"

# make in the top directory for the build under test, with the build's
# own mode (sanitizers, zstd or not), should make have anything to rebuild.
mk() {
	local mode="HAVE_ZSTD=0"
	nm "$ELOG_BIN/libelog.a" | grep -q ' U ZSTD_' && mode="HAVE_ZSTD=1"
	nm "$ELOG_BIN/libelog.a" | grep -q __asan_ && mode="$mode SANITIZE=1"
	make -s -C "$TOP" B="$ELOG_BIN" $mode "$@"
}

# The program of the README's "library in 20 lines", with the log given as
# its argument: append one record, sync it, read the log back.
write_hello() {
	cat >"$T/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <elog.h>

int main(int argc, char **argv)
{
	struct elog_options opt = { .create = 1 };
	const char *v = "{\"type\":\"login\"}";
	struct elog_record rec = { .ts_ms = ELOG_TS_NOW, .value = v, .value_len = strlen(v) };
	elog *w = NULL;
	elog_reader *r = NULL;
	uint64_t off;
	int e;

	if (argc != 2)
		return 2;
	if ((e = elog_open(&w, argv[1], &opt)) == 0 &&
	    (e = elog_append(w, &rec, &off)) == 0)
		e = elog_sync(w);
	if (e)
		fprintf(stderr, "hello: %s\n", w ? elog_errmsg(w) : elog_strerror(e));
	elog_close(w);
	if (e == 0 && (e = elog_reader_open(&r, argv[1])) == 0)
		while (elog_reader_next(r, &rec) == 0)
			printf("%llu %.*s\n", (unsigned long long)rec.offset,
			       (int)rec.value_len, (const char *)rec.value);
	elog_reader_close(r);
	printf("%s\n", elog_version());
	return e != 0;
}
EOF
}

# Build hello.c with the flags pkg-config gives (the environment says where
# the .pc file is), run it twice, and check what it read back.
build_and_run_hello() {
	local flags san=
	flags=$(pkg-config --cflags --libs elog)
	nm "$ELOG_BIN/libelog.a" | grep -q __asan_ && san=-fsanitize=address,undefined
	write_hello
	cc $san -o "$T/hello" "$T/hello.c" $flags
	run "$T/hello" "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
0.2.0' ]
	run "$T/hello" "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
1 {"type":"login"}
0.2.0' ]
}

# Every file that make install should have put under ROOT.
check_layout() {
	local root=$1 p s
	for p in $PROGRAMS; do
		[ -x "$root/bin/$p" ] && [ -f "$root/bin/$p" ]
		[ "$("$root/bin/$p" --version)" = "$p (elog) 0.2.0" ]
		[ -f "$root/share/man/man1/$p.1" ]
		[ -f "$root/share/bash-completion/completions/$p" ]
	done
	[ -f "$root/lib/libelog.a" ]
	cmp "$root/include/elog.h" "$TOP/lib/elog.h"
	[ -f "$root/lib/pkgconfig/elog.pc" ]
	for s in 3 5 7; do [ -f "$root/share/man/man$s/elog.$s" ]; done
	# One copy of the completion file, the other five names link to it.
	cmp "$root/share/bash-completion/completions/elog-append" "$TOP/completion/elog.bash"
	for p in elog-cat elog-commit elog-compact elog-retain elog-verify; do
		[ "$(readlink "$root/share/bash-completion/completions/$p")" = elog-append ]
	done
	# As bash-completion loads it: by the name of the program completed.
	run bash --norc -c 'source "$1" && complete -p elog-verify' sh \
		"$root/share/bash-completion/completions/elog-verify"
	[ "$status" -eq 0 ] && [ "$output" = "complete -F _elog elog-verify" ]
	# Nothing else: 6 programs, 9 man pages, 6 completions, lib, header, .pc.
	[ "$(find "$root" ! -type d | wc -l)" -eq 24 ] || { find "$root" ! -type d >&2; return 1; }
}

@test "install: DESTDIR=... PREFIX=/usr, pkg-config with a sysroot, uninstall" {
	command -v pkg-config >/dev/null || skip "pkg-config is not installed"
	local d=$T/dest
	mk install DESTDIR="$d" PREFIX=/usr
	check_layout "$d/usr"
	# The .pc file names the final place, not the staging directory.
	grep -qx 'prefix=/usr' "$d/usr/lib/pkgconfig/elog.pc"
	grep -qx 'includedir=/usr/include' "$d/usr/lib/pkgconfig/elog.pc"
	! grep -q "$d" "$d/usr/lib/pkgconfig/elog.pc"
	# pkg-config puts the sysroot before the .pc file's paths.
	export PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d
	export PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig
	[ "$(pkg-config --modversion elog)" = 0.2.0 ]
	[[ " $(pkg-config --cflags elog) " == *" -I$d/usr/include "* ]]
	[[ " $(pkg-config --libs elog) " == *" -L$d/usr/lib "*"-lelog "* ]]
	build_and_run_hello
	mk uninstall DESTDIR="$d" PREFIX=/usr
	[ "$(find "$d" ! -type d | wc -l)" -eq 0 ] || { find "$d" ! -type d >&2; return 1; }
}

@test "install: PREFIX=... with no DESTDIR, pkg-config by PKG_CONFIG_PATH, uninstall" {
	command -v pkg-config >/dev/null || skip "pkg-config is not installed"
	local p=$T/p
	mk install PREFIX="$p"
	check_layout "$p"
	grep -qx "prefix=$p" "$p/lib/pkgconfig/elog.pc"
	export PKG_CONFIG_PATH=$p/lib/pkgconfig
	[ "$(pkg-config --modversion elog)" = 0.2.0 ]
	build_and_run_hello
	# The installed programs read what the installed library wrote.
	run "$p/bin/elog-cat" -F '%o %s\n' "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
1 {"type":"login"}' ]
	mk uninstall PREFIX="$p"
	[ "$(find "$p" ! -type d | wc -l)" -eq 0 ] || { find "$p" ! -type d >&2; return 1; }
}

@test "install: uninstall of nothing installed succeeds and removes nothing else" {
	local p=$T/other
	mkdir -p "$p/bin"
	echo keep >"$p/bin/someone-else"
	mk uninstall PREFIX="$p"
	[ "$(cat "$p/bin/someone-else")" = keep ]
}
