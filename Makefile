# elog: plain make.  `make`, `make check`, `make check SANITIZE=1`,
# `make install PREFIX=/usr/local DESTDIR=`.
.SUFFIXES:
# Objects are intermediate files make must not delete after linking.
.SECONDARY:

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
PKGDIR  ?= $(LIBDIR)/pkgconfig
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
# CC and AR are make's own (cc, ar) unless given.
INSTALL ?= install
# The sanitizer build at -O1, as AddressSanitizer's authors advise: gcc
# compiles an instrumented file in half the time it takes at -O2, and the
# sanitizer lane of scripts/test.sh compiles the library, the programs and
# the crash simulator so.
ifeq ($(SANITIZE),1)
CFLAGS  ?= -O1 -g
else
CFLAGS  ?= -O2 -g
endif
# The one version, ELOG_VERSION_STRING of lib/elog.h.
VERSION := $(shell sed -n 's/^.define ELOG_VERSION_STRING "\(.*\)"$$/\1/p' lib/elog.h)

# The flags (ELOG_CFLAGS, ELOG_LDLIBS, HAVE_ZSTD detected with pkg-config
# unless given) and the build directory named for them: mk/flags.mk.
include mk/flags.mk
ifeq ($(SANITIZE),1)
ELOG_CFLAGS += $(SAN_CFLAGS)
ELOG_LDLIBS += $(SAN_LDLIBS)
endif
B ?= $(ELOG_BUILD)

# The programs link libzstd.a when it is there (ZSTD_STATIC=0: the shared
# library), found where pkg-config's -L says, else where the compiler looks.
# A program then starts without loading libzstd.so: no open, mmap and
# relocation of it (nine system calls and a dozen page faults) for a log
# that does not compress, in every one-shot `elog-append`.  libelog.a and
# elog.pc leave that choice to the program that links them.
ifeq ($(HAVE_ZSTD),1)
ZSTD_LIBDIRS := $(patsubst -L%,%,$(filter -L%,$(ZSTD_LIBS)))
ZSTD_A := $(firstword $(if $(ZSTD_LIBDIRS),$(wildcard $(ZSTD_LIBDIRS:%=%/libzstd.a)),\
	$(abspath $(filter /%,$(shell $(CC) -print-file-name=libzstd.a 2>/dev/null)))))
ZSTD_STATIC ?= $(if $(ZSTD_A),1,0)
else
ZSTD_STATIC := 0
endif
ifeq ($(ZSTD_STATIC),1)
ifeq ($(ZSTD_A),)
$(error ZSTD_STATIC=1, but no libzstd.a was found (install libzstd-dev, or give ZSTD_STATIC=0))
endif
PROG_LDLIBS = $(patsubst -lzstd,$(ZSTD_A),$(ELOG_LDLIBS))
else
PROG_LDLIBS = $(ELOG_LDLIBS)
endif
# Not for `make builddir` or `make print-libs`, whose output is one line.
ifeq ($(filter builddir print-libs,$(MAKECMDGOALS)),)
$(info elog: building with$(if $(filter 1,$(HAVE_ZSTD)),,out) zstd (HAVE_ZSTD=$(HAVE_ZSTD)$(if $(filter 1,$(HAVE_ZSTD)), ZSTD_STATIC=$(ZSTD_STATIC))) into $(B)/)
endif

LIB_SRC  = $(ELOG_LIB_SRC)
LIB_OBJ  = $(LIB_SRC:lib/%.c=$(B)/lib/%.o)
CLI_SRC  = $(filter-out bin/elog-%.c,$(wildcard bin/*.c))
CLI_OBJ  = $(CLI_SRC:bin/%.c=$(B)/bin/%.o)
PROGS    = $(patsubst bin/%.c,$(B)/%,$(sort $(wildcard bin/elog-*.c)))
UNIT_SRC = $(sort $(wildcard tests/unit/test_*.c))
# The unit programs check-unit builds and runs: all of them, unless told
# otherwise (UNIT_TESTS='test_index test_scan'; the no-zstd lane names its
# own).
UNIT_TESTS ?= $(UNIT_SRC:tests/unit/%.c=%)
UNIT     = $(UNIT_TESTS:%=$(B)/tests/%)
MANS     = $(sort $(wildcard man/*.[1357]))

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

all: $(B)/libelog.a $(PROGS) $(B)/elog.pc $(B)/elog-uninstalled.pc

# The headers each object or test program was compiled from, written by
# the compiler beside it ($(B)/lib/writer.d); -MP: a header removed is not
# an error.
DEPFLAGS = -MMD -MP
-include $(wildcard $(B)/lib/*.d $(B)/bin/*.d $(B)/tests/*.d)

# What this directory's objects were compiled with (mk/flags.mk).  With
# DEPFLAGS: a directory built before there were dependency files is built
# again, so that every object has its own.
$(B)/flags: FORCE
	$(call elog_flags_file,$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) $(ELOG_LDLIBS) $(PROG_LDLIBS) $(UNIT_OPT))

# The build directory of these flags, for scripts: `make -s builddir`.
builddir:
	@echo $(B)

$(B)/lib/%.o: lib/%.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/libelog.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(B)/bin/%.o: bin/%.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/elog-%: $(B)/bin/elog-%.o $(CLI_OBJ) $(B)/libelog.a
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CLI_OBJ) $(B)/libelog.a $(PROG_LDLIBS)

# A maintenance run made to crash at a chosen step (tests/crash/maint_fault.h):
# the library's elog__maint_step() is replaced at link time, in the unit tests and
# in a test-only build of elog-compact.  elog__maint_step() has an object of its
# own (lib/maintstep.c) because --wrap redirects calls between objects only.
MAINT_FAULT_OBJ = $(B)/tests/maint_fault.o
MAINT_FAULT     = $(MAINT_FAULT_OBJ) -Wl,--wrap=elog__maint_step

# The unit programs are compiled without optimisation (UNIT_OPT, after
# CFLAGS): the code they test is the library's, compiled with CFLAGS, and
# their own compilation at -O2 was most of a lane's compiling (test_reader.c:
# 3.7 s of processor at -O2, 1.0 s at -O0; under the sanitizers 9.0 s and
# 2.0 s).
UNIT_OPT ?= -O0
$(B)/tests/%: tests/unit/%.c $(B)/libelog.a $(B)/flags $(MAINT_FAULT_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(UNIT_OPT) $(DEPFLAGS) $(LDFLAGS) -Itests/unit -o $@ $< \
		$(B)/libelog.a $(MAINT_FAULT) $(CHECK_LIBS) $(ELOG_LDLIBS)

# test_json: the JSON of the programs (bin/json.c), which is not in
# libelog.a: with the programs' shared objects, bin/cli.o's standard output
# among them.
$(B)/tests/test_json: tests/unit/test_json.c $(CLI_OBJ) $(B)/libelog.a $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(UNIT_OPT) $(DEPFLAGS) $(LDFLAGS) -Itests/unit -Ibin \
		-o $@ $< $(CLI_OBJ) $(B)/libelog.a $(CHECK_LIBS) $(ELOG_LDLIBS)

$(MAINT_FAULT_OBJ): tests/crash/maint_fault.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# LD_PRELOAD shim: a failed or interrupted fdatasync for the CLI tests.
$(B)/tests/syncfault.so: tests/cli/syncfault.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) -std=c11 -fPIC -shared -Wall -Wextra -Werror -O2 -o $@ $< -ldl

# LD_PRELOAD shim: a follower's look at a log stalled while it is deleted.
$(B)/tests/dirstall.so: tests/cli/dirstall.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) -std=c11 -fPIC -shared -Wall -Wextra -Werror -O2 -o $@ $< -ldl

$(B)/tests/elog-compact-faulty: $(B)/bin/elog-compact.o $(CLI_OBJ) $(B)/libelog.a $(MAINT_FAULT_OBJ)
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CLI_OBJ) $(B)/libelog.a \
		$(MAINT_FAULT) $(PROG_LDLIBS)

# elog.pc from elog.pc.in: $(call pc_sed,PREFIX,LIBDIR,INCDIR).  Libs
# names what the library of this build needs (threads, zstd, sanitizers).
pc_sed = sed -e 's|@PREFIX@|$(1)|g' -e 's|@LIBDIR@|$(2)|g' -e 's|@INCDIR@|$(3)|g' \
	-e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBS@|$(strip $(ELOG_LDLIBS))|g' elog.pc.in

# elog.pc names the install's directories, so `make install` writes it
# again with the PREFIX it is given.
$(B)/elog.pc: elog.pc.in lib/elog.h Makefile $(B)/flags
	@mkdir -p $(@D)
	$(call pc_sed,$(PREFIX),$(LIBDIR),$(INCDIR)) > $@

# A program built against this build in the tree, without installing:
# elog-uninstalled.pc, which pkg-config takes before elog.pc from the same
# directory (PKG_CONFIG_PATH=build pkg-config --libs elog), and
# `make -s print-libs`, given the variables the build was given.
$(B)/elog-uninstalled.pc: elog.pc.in lib/elog.h Makefile $(B)/flags
	@mkdir -p $(@D)
	$(call pc_sed,$(CURDIR),$(abspath $(B)),$(CURDIR)/lib) > $@

print-libs:
	@echo '-L$(abspath $(B)) -lelog $(strip $(ELOG_LDLIBS))'

# The fuzzers carry their own sanitizers: the SANITIZE=1 run skips them,
# and the Python package's tests, which run under ASan anyway.
ifeq ($(SANITIZE),1)
check: check-unit check-cli check-man check-examples check-crash check-symbols check-layers
else
check: check-unit check-cli check-man check-examples check-crash check-fuzz check-build check-symbols check-layers \
	check-python
endif

# The three lanes of scripts/test.sh, each a target: the default build's
# tests (`make check` without the fuzzers and check-build, which the
# no-zstd lane's time has room for), the sanitizer build's (`make check
# SANITIZE=1` with the CLI tests of hostile input, elog-verify and the
# chain of segments, which parse damaged files, only: every test is
# several times slower there; without check-man, check-symbols and
# check-layers, which read the same pages and the names and calls of the
# same sources as the default lane's), and the no-zstd build's (the unit
# and CLI tests of what that build changes: compressed logs refused, the
# format, the build and install, the programs' help), and, to even out the
# lanes' times, the CLI tests of consumers and compaction, which never
# compress, so that both builds run the same code there.  Each runs every
# part whatever the others did (-k).
SAN_CLI_TESTS = tests/cli/hostile.bats tests/cli/elog-verify.bats tests/cli/chain.bats
NOZSTD_ONLY_CLI_TESTS = tests/cli/elog-commit.bats tests/cli/elog-compact.bats \
	tests/cli/elog-cat-group.bats
NOZSTD_CLI_TESTS = tests/cli/compress.bats tests/cli/format.bats tests/cli/install.bats \
	tests/cli/version.bats tests/cli/help.bats tests/cli/hostile.bats $(NOZSTD_ONLY_CLI_TESTS)

# The default lane's crash simulator checks one in eight of the power-loss
# points and its soak makes 50 kills; the no-zstd lane's fails one call in
# two of every workload (none of the fault workloads compresses, so both
# builds run the same code there), and the sanitizer lane's one call in
# three of the same workloads under ASan and UBSan: each sample a new one
# each run, its seed printed; `make crash` checks every point and every
# call.  (At one in three and every call, these were 59 s and 53 s of
# processor time, in a run that needed 40% less to fit CI's time beside
# stress-ng.)  Its CLI tests are all but the sanitizer lane's
# (SAN_CLI_TESTS), which check there what they check here and memory
# errors besides (hostile.bats runs without the sanitizers in the no-zstd
# lane too), and those the no-zstd lane alone runs
# (NOZSTD_ONLY_CLI_TESTS); the writers' protocol (writer-protocol.bats)
# runs here, on a disk, where a sync takes long enough for writers to meet
# in group commit, and not on the other lanes' tmpfs.  Its examples are
# the shell scripts: those written in C run in the sanitizer lane
# (SAN_EXAMPLE_TESTS), which checks there what they check here and memory
# errors besides.
DEFAULT_CLI_TESTS = $(filter-out $(SAN_CLI_TESTS) $(NOZSTD_ONLY_CLI_TESTS), \
	$(sort $(wildcard tests/cli/*.bats))) tests/live

DEFAULT_EXAMPLE_TESTS = test-shell-consumer test-edge-gateway test-agent-recorder test-kafka

check-default:
	$(MAKE) -k check-unit check-cli check-man check-examples check-crash check-symbols \
		check-layers CRASHSIM_QUICK='--power --sample 8' SOAK_KILLS=50 CLI_TESTS='$(DEFAULT_CLI_TESTS)' \
		EXAMPLE_TESTS='$(DEFAULT_EXAMPLE_TESTS)'

# Under the sanitizers, the examples written in C, which link the library
# (sqlite-consumer, outbox-app and -relay, undo-history); the others are
# shell scripts around the programs, run in the default lane.  Their
# hundreds of short processes run without LeakSanitizer, whose check at
# each exit was a third of their processor time (test-undo-history:
# 22.6 s with it, 15.6 s without); the unit programs check the library
# for leaks, and most of these processes are killed with SIGKILL, which
# no leak check survives anyway.
SAN_EXAMPLE_TESTS = test-sqlite-consumer test-outbox test-undo-history

# The sanitizer and no-zstd lanes keep their scratch files on tmpfs
# (LANE_TMPDIR, /dev/shm where it is writable and large): what they alone check,
# memory errors and the build without zstd, does not depend on the file
# system, and on a disk the fdatasync calls of every test were most of
# their system time (test_consumers: 2.7 s of 3.7 s on ext4, 0.7 s of
# 1.2 s on tmpfs).  The default lane's tests run on the disk of TMPDIR,
# as a user's would.  Only a /dev/shm with 4 GiB free serves (a
# container's is often 64 MiB, which the tests of many segments fill).
LANE_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && \
	[ "$$(df -Pk /dev/shm | awk 'NR == 2 { print $$4 }')" -ge 4194304 ] 2>/dev/null && \
	echo /dev/shm)
LANE_ENV = $(if $(LANE_TMPDIR),TMPDIR='$(LANE_TMPDIR)')

# Its unit programs run their tests in one process each (CK_FORK=no):
# LeakSanitizer checks a process's memory when it exits, and Check's
# process per test made that a check per test, two thirds of these
# programs' processor time (test_reader: 6.4 s forked, 1.5 s not).  A
# leak is still reported, when the program exits, with the stack that
# allocated it; a test that hangs is stopped by the step's time limit
# instead of Check's.
check-sanitize:
	$(LANE_ENV) $(MAKE) -k check-unit check-cli check-examples check-crash SANITIZE=1 \
		CLI_TESTS='$(SAN_CLI_TESTS)' EXAMPLE_TESTS='$(SAN_EXAMPLE_TESTS)' UNIT_ENV='CK_FORK=no' \
		EXAMPLE_ENV='ASAN_OPTIONS=detect_leaks=0'

# Without zstd, only lib/compress.c is compiled otherwise (its zstd codec
# left out, so elog_have_zstd() says 0): the no-zstd lane runs the unit
# programs that open, write, read, verify or parse compressed or
# hostile data and settings; the others run the same code in the default
# and sanitizer lanes.
NOZSTD_UNIT_TESTS = test_compress test_settings test_segment test_reader test_writer \
	test_verify test_hostile

check-nozstd:
	$(LANE_ENV) $(MAKE) -k check-unit check-cli check-faults HAVE_ZSTD=0 CLI_TESTS='$(NOZSTD_CLI_TESTS)' \
		UNIT_TESTS='$(NOZSTD_UNIT_TESTS)'

# The Python package (python/, issue 36): built from the tree into fresh
# venvs and tested with /usr/bin/python3 and with python3 on PATH when that
# is another interpreter, then built with ASan and UBSan and tested again
# under Debian's interpreter with their runtimes preloaded
# (python/tests/run.sh).  The extension uses zstd as this build does.
check-python: all
	ELOG_BIN='$(abspath $(B))' ELOG_HAVE_ZSTD=$(HAVE_ZSTD) python/tests/run.sh
	ELOG_BIN='$(abspath $(B))' ELOG_HAVE_ZSTD=$(HAVE_ZSTD) ELOG_SANITIZE=1 python/tests/run.sh

# libelog.a exports the names of elog.h and internal ones prefixed elog__,
# nothing else that could collide with a program's own names.
check-symbols: $(B)/libelog.a
	tests/symbols/check.sh $(B)/libelog.a lib/elog.h

# No file of lib/ calls a function of a higher layer: the order is
# tests/layers/order (lowest first), the calls are nm's of each object.
# No header of lib/ includes one of a higher layer (tests/layers/headers),
# and no file of lib/ includes internal.h, the tests' umbrella.  The
# self-test first: a check that cannot see a planted upward call or
# include must not pass.
check-layers: $(B)/libelog.a
	tests/layers/check.sh --self-test
	tests/layers/check.sh $(B)/lib tests/layers/order
	tests/layers/check.sh --headers lib tests/layers/headers

# Builds of other flags (HAVE_ZSTD=0 after a default build, one B for both)
# never link each other's objects: in a scratch copy, at -O0.
check-build:
	tests/build/flags.sh

# libFuzzer harnesses (clang): a few seconds each on the committed corpus in
# `make check`; `make fuzz FUZZ_SECONDS=N` runs each for longer.
check-fuzz:
	$(MAKE) -C tests/fuzz check HAVE_ZSTD=$(HAVE_ZSTD)

fuzz:
	$(MAKE) -C tests/fuzz run HAVE_ZSTD=$(HAVE_ZSTD)

# Benchmarks against SQLite, quick sizes (bench/README.md); needs SQLite's
# development files and the sqlite3 shell.  Not part of `make check`.
bench: all
	BENCH_BUILT=1 B=$(B) CC="$(CC)" bench/run.sh --quick

# The crash simulator (tests/crash): power loss at every point of recorded
# workloads, a failing call at every call site, and the kill -9 soak.
# `make check` runs the quick version; `make crash` the long one.
CRASH_SRC  = $(filter-out tests/crash/maint_fault.c,$(sort $(wildcard tests/crash/*.c)))
CRASH_WRAP = -Wl,--wrap=open,--wrap=openat,--wrap=write,--wrap=pwrite,--wrap=ftruncate \
	-Wl,--wrap=fsync,--wrap=fdatasync,--wrap=renameat,--wrap=unlinkat,--wrap=dup,--wrap=close

$(B)/tests/crashsim: $(CRASH_SRC) $(wildcard tests/crash/*.h) $(B)/libelog.a $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ELOG_CFLAGS) $(CFLAGS) $(LDFLAGS) -Itests/crash -o $@ $(CRASH_SRC) \
		$(B)/libelog.a $(CRASH_WRAP) $(ELOG_LDLIBS)

# `make check` checks a sample of the power-loss points (one in three, the
# last always) and a shorter soak, to stay within CI's time; under the
# sanitizers, which make each state several times slower to check, it runs
# the fault injection only (the library's error paths, where a sanitizer
# finds most), one failing call in three, the power-loss states and every
# failing call being checked by the default build.  `make crash` checks
# every point and every call.
ifeq ($(SANITIZE),1)
CRASHSIM_QUICK = --faults --fault-sample 3
SOAK_KILLS = 30
else
CRASHSIM_QUICK = --sample 3
SOAK_KILLS = 80
endif

check-crash: $(B)/tests/crashsim $(PROGS) $(B)/tests/elog-compact-faulty
	$(B)/tests/crashsim $(CRASHSIM_QUICK)
	ELOG_BIN=$(CURDIR)/$(B) tests/crash/soak.sh --kills $(SOAK_KILLS) --writers 8

# The fault runs alone, one failing call in two (the no-zstd lane; from
# a seed printed; CRASHSIM_FAULTS=--faults: every call).
CRASHSIM_FAULTS ?= --faults --fault-sample 2
check-faults: $(B)/tests/crashsim
	$(B)/tests/crashsim $(CRASHSIM_FAULTS)

crash: $(B)/tests/crashsim $(PROGS) $(B)/tests/elog-compact-faulty
	$(B)/tests/crashsim --long
	ELOG_BIN=$(CURDIR)/$(B) tests/crash/soak.sh --kills 1000 --writers 8

# The aarch64 CRC-32C code under qemu (skipped where the tools are missing).
check-cross:
	B=$(B) tests/cross/run.sh

EXAMPLES_VARS = B=$(abspath $(B)) SANITIZE=$(SANITIZE) HAVE_ZSTD=$(HAVE_ZSTD)

examples: all
	$(MAKE) -C examples $(EXAMPLES_VARS)

# EXAMPLE_TESTS='test-outbox ...' runs those example tests only (the
# sanitizer lane's are the tests of the examples written in C);
# EXAMPLE_ENV, variables for them (the sanitizer lane's ASAN_OPTIONS).
EXAMPLE_ENV ?=
check-examples: examples
	$(EXAMPLE_ENV) $(MAKE) -C examples $(EXAMPLES_VARS) $(if $(EXAMPLE_TESTS),EXAMPLE_TESTS='$(EXAMPLE_TESTS)') check

# Three test programs at a time (they wait on fdatasync more than they
# compute); each one's output is printed whole when it ends, every one runs
# whatever the others did, and the output ends with the failing programs
# and their failing lines (tests/unit/run.sh).  Before any runs: every
# test of every file is registered (tests/unit/registered.sh).
UNIT_JOBS ?= 3
# UNIT_ENV: variables for the programs (the sanitizer lane's CK_FORK=no).
UNIT_ENV ?=
check-unit: $(UNIT)
	@tests/unit/registered.sh $(UNIT_SRC)
	@$(UNIT_ENV) tests/unit/run.sh $(UNIT_JOBS) $(UNIT:%=./%)

# The CLI tests wait on fdatasync, sleeps and the processes they start far
# more than on the processor: with GNU parallel, BATS_JOBS files run at
# once (the tests of one file still one after the other).
BATS_JOBS ?= 3
BATS_PAR = $(shell command -v parallel >/dev/null 2>&1 && \
	echo --jobs $(BATS_JOBS) --no-parallelize-within-files)

# Which bats files check-cli runs: all of them, unless told otherwise (the
# sanitizer lane of scripts/test.sh names the ones that exercise parsing
# and the file format, to stay within CI's time).
CLI_TESTS ?= tests/cli tests/live

# tests/cli/run.sh: bats, then the failing tests again at the end.
check-cli: $(PROGS) $(B)/tests/elog-compact-faulty $(B)/tests/syncfault.so $(B)/tests/dirstall.so
	ELOG_BIN=$(CURDIR)/$(B) tests/cli/run.sh $(BATS_PAR) $(CLI_TESTS)

# A reader written from elog(5) alone, the page's example and read_log.py, against
# elog-cat and elog-verify on 600 logs the programs made and damaged
# (tests/format/gen_logs.py, page_compare.py); not in CI, which runs 60 of
# them in tests/cli/page-reader.bats.
PAGE_LOGS ?= 600
check-page: $(PROGS) $(B)/tests/elog-compact-faulty
	rm -rf $(B)/page-logs
	python3 tests/format/gen_logs.py --count $(PAGE_LOGS) --seed 34 --bin $(B) $(B)/page-logs
	python3 tests/format/page_compare.py --example --also tests/format/read_log.py \
		--bin $(B) $(B)/page-logs

# mandoc's lint, elog(3) against lib/elog.h (tests/man/api-check.sh), and
# no plain word set as a flag (tests/man/flag-words.sh).
check-man:
	mandoc -Tlint -Wwarning $(MANS)
	tests/man/api-check.sh lib/elog.h man/elog.3
	tests/man/flag-words.sh $(MANS)

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(PKGDIR) $(DESTDIR)$(COMPDIR) \
		$(patsubst .%,$(DESTDIR)$(MANDIR)/man%,$(sort $(suffix $(MANS))))
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 644 $(B)/libelog.a $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 644 lib/elog.h $(DESTDIR)$(INCDIR)
	$(call pc_sed,$(PREFIX),$(LIBDIR),$(INCDIR)) > $(DESTDIR)$(PKGDIR)/elog.pc
	chmod 644 $(DESTDIR)$(PKGDIR)/elog.pc
	for m in $(MANS); do $(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}; done
	# bash-completion loads a command's completion from a file of its name:
	# one copy of completion/elog.bash, and a symlink to it per program.
	$(INSTALL) -m 644 completion/elog.bash $(DESTDIR)$(COMPDIR)/elog-append
	for p in $(filter-out elog-append,$(notdir $(PROGS))); do \
		ln -sf elog-append $(DESTDIR)$(COMPDIR)/$$p; done

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$${p##*/}; done
	rm -f $(DESTDIR)$(LIBDIR)/libelog.a $(DESTDIR)$(INCDIR)/elog.h $(DESTDIR)$(PKGDIR)/elog.pc
	for m in $(MANS); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done
	for p in $(PROGS); do rm -f $(DESTDIR)$(COMPDIR)/$${p##*/}; done

clean:
	rm -rf build build-*
	$(MAKE) -C tests/fuzz clean

FORCE:

# The house layout, written down in .clang-format (clang-format 14, as
# Debian 12 ships it): `make format` lays out every C file of the tree.
# Not a check: another clang-format version lays out a few lines otherwise.
CLANG_FORMAT ?= clang-format
format:
	$(CLANG_FORMAT) -i $$(git ls-files '*.c' '*.h')

.PHONY: format FORCE builddir print-libs all check check-default check-sanitize check-nozstd check-python check-build check-symbols check-layers check-unit check-cli check-crash check-faults crash check-page check-man examples check-examples check-fuzz check-cross fuzz bench install uninstall clean
