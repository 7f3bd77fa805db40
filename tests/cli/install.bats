#!/usr/bin/env bats
# make install and make uninstall of the build under test (ELOG_BIN, the
# build directory): the layout, a program built against the installed copy
# with pkg-config, and an uninstall that leaves no file behind; once into a
# DESTDIR as a package build does it, once straight into a PREFIX.

load helpers

# The tests run make as a user would at a shell: not as a sub-make of the
# make that runs the tests, whose MAKEFLAGS (with -w, print the directory)
# would otherwise mix "Entering directory" into make -s print-libs.
unset MAKEFLAGS MFLAGS MAKELEVEL

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PROGRAMS="elog-append elog-cat elog-commit elog-compact elog-retain elog-verify"
# The version of the tree (lib/elog.h), which everything installed carries.
VERSION=$(sed -n 's/^#define ELOG_VERSION_STRING "\(.*\)"$/\1/p' "$TOP/lib/elog.h")

# The make variables of the build under test, as NAME=value words: its own
# mode (sanitizers, zstd or not) and its directory.
build_vars() {
	local mode="HAVE_ZSTD=0"
	nm "$ELOG_BIN/libelog.a" | grep -q ' U ZSTD_' && mode="HAVE_ZSTD=1"
	nm "$ELOG_BIN/libelog.a" | grep -q __asan_ && mode="$mode SANITIZE=1"
	echo "B=$ELOG_BIN $mode"
}

# make in the top directory for the build under test, with the build's
# own mode (sanitizers, zstd or not), should make have anything to rebuild.
mk() {
	make -s -C "$TOP" $(build_vars) "$@"
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
'"$VERSION" ]
	run "$T/hello" "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
1 {"type":"login"}
'"$VERSION" ]
}

# Every file that make install should have put under ROOT.
check_layout() {
	local root=$1 p s
	for p in $PROGRAMS; do
		[ -x "$root/bin/$p" ] && [ -f "$root/bin/$p" ]
		[ "$("$root/bin/$p" --version)" = "$p (elog) $VERSION" ]
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

# The modes make install gives, whatever the umask: 755 for the programs
# and the directories, 644 for the other files.
check_modes() {
	local root=$1 bad
	bad=$(find "$root" \( -type d -o -path "$root/bin/*" \) ! -perm 755 -o \
		-type f ! -path "$root/bin/*" ! -perm 644)
	[ -z "$bad" ] || { ls -ld $bad >&2; return 1; }
}

@test "install: DESTDIR=... PREFIX=/usr, pkg-config with a sysroot, uninstall" {
	command -v pkg-config >/dev/null || skip "pkg-config is not installed"
	local d=$T/dest
	(umask 077 && mk install DESTDIR="$d" PREFIX=/usr)
	check_layout "$d/usr"
	check_modes "$d/usr"
	# The .pc file names the final place, not the staging directory.
	grep -qx 'prefix=/usr' "$d/usr/lib/pkgconfig/elog.pc"
	grep -qx 'includedir=/usr/include' "$d/usr/lib/pkgconfig/elog.pc"
	! grep -q "$d" "$d/usr/lib/pkgconfig/elog.pc"
	# pkg-config puts the sysroot before the .pc file's paths.
	export PKG_CONFIG_PATH=$d/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d
	export PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig
	[ "$(pkg-config --modversion elog)" = "$VERSION" ]
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
	[ "$(pkg-config --modversion elog)" = "$VERSION" ]
	build_and_run_hello
	# The installed programs read what the installed library wrote.
	run "$p/bin/elog-cat" -F '%o %s\n' "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
1 {"type":"login"}' ]
	mk uninstall PREFIX="$p"
	[ "$(find "$p" ! -type d | wc -l)" -eq 0 ] || { find "$p" ! -type d >&2; return 1; }
}

# The README's line for a program built against the library in the tree,
# run as written, in a tree of links to this one's sources with hello.c
# beside them; the make variables of the build under test are in the
# environment, as the README says to give them.
@test "install: the README's line for the library in the tree links, as written" {
	local line
	line=$(sed -n 's/ *# in the tree$//p' "$TOP/README.md")
	[ "$line" = 'cc -Ilib -o hello hello.c $(make -s print-libs)' ]
	mkdir "$T/tree"
	for f in Makefile mk lib bin elog.pc.in; do ln -s "$TOP/$f" "$T/tree/$f"; done
	write_hello
	mv "$T/hello.c" "$T/tree/hello.c"
	(cd "$T/tree" && export $(build_vars) && eval "$line")
	run "$T/tree/hello" "$T/events"
	[ "$status" -eq 0 ] && [ "$output" = '0 {"type":"login"}
'"$VERSION" ]
	# Nothing was built: the build under test was up to date.
	[ "$(ls "$T/tree")" = "$(printf '%s\n' Makefile bin elog.pc.in hello hello.c lib mk)" ]
}

@test "install: elog(3) gives the README's line for the library in the tree" {
	local readme man
	readme=$(sed -n 's/ *# in the tree$//p' "$TOP/README.md")
	man=$(sed -n 's/^\.Dl \$ \(cc -Ilib .*\)$/\1/p' "$TOP/man/elog.3")
	[ "${man//logdemo/hello}" = "$readme" ]
}

@test "install: make print-libs prints what a program needs to link the build" {
	local libs
	libs=$(mk print-libs)
	[ "${libs%% *}" = "-L$ELOG_BIN" ]
	[[ " $libs " == *" -lelog -pthread "* ]]
	if nm "$ELOG_BIN/libelog.a" | grep -q ' U ZSTD_'; then
		[[ " $libs " == *" -lzstd "* ]]
	else
		[[ " $libs " != *" -lzstd "* ]]
	fi
}

@test "install: pkg-config finds the build under test as elog-uninstalled" {
	command -v pkg-config >/dev/null || skip "pkg-config is not installed"
	export PKG_CONFIG_PATH=$ELOG_BIN
	[ "$(pkg-config --modversion elog)" = "$VERSION" ]
	# Word for word (pkg-config ends its line with a space).
	[ "$(echo $(pkg-config --cflags elog))" = "-I$TOP/lib" ]
	[ "$(echo $(pkg-config --libs elog))" = "$(mk print-libs)" ]
	build_and_run_hello
}

@test "install: uninstall of nothing installed succeeds and removes nothing else" {
	local p=$T/other
	mkdir -p "$p/bin"
	echo keep >"$p/bin/someone-else"
	mk uninstall PREFIX="$p"
	[ "$(cat "$p/bin/someone-else")" = keep ]
}
