# mk/flags.mk: the flags a build of elog is compiled with, the library's
# sources, and the build directory named for the flag set.  Included by the
# Makefile, tests/fuzz/Makefile and examples/Makefile so that the three
# agree.  ELOG_TOP is the repository's root as seen from the including
# Makefile, with a trailing slash (empty: the current directory).

# zstd is optional: found with pkg-config unless HAVE_ZSTD=0 or =1 is given
# (on the command line or in the environment).
HAVE_ZSTD ?= $(shell pkg-config --exists libzstd 2>/dev/null && echo 1 || echo 0)
ifeq ($(HAVE_ZSTD),1)
ZSTD_CFLAGS := -DELOG_HAVE_ZSTD $(shell pkg-config --cflags libzstd)
ZSTD_LIBS   := $(shell pkg-config --libs libzstd)
else
ZSTD_CFLAGS :=
ZSTD_LIBS   :=
endif

# Our own flags stay separate from the user's CFLAGS.
ELOG_WARN   = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ELOG_CFLAGS = -std=c11 -D_GNU_SOURCE -pthread -I$(ELOG_TOP)lib $(ELOG_WARN) $(ZSTD_CFLAGS)
ELOG_LDLIBS = -pthread $(ZSTD_LIBS)

# AddressSanitizer and UBSan, any report fatal: SANITIZE=1, and the fuzzers.
SAN_CFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_LDLIBS = -fsanitize=address,undefined

ELOG_LIB_SRC = $(sort $(wildcard $(ELOG_TOP)lib/*.c))

# One build directory per flag set, so that objects compiled with one set
# are never linked with those of another: build, build-nozstd, build-san,
# build-san-nozstd (named for the values used, whether detected or given).
ELOG_NOZSTD = $(if $(filter 1,$(HAVE_ZSTD)),,-nozstd)
ELOG_BUILD  = build$(if $(filter 1,$(SANITIZE)),-san)$(ELOG_NOZSTD)

# $(call elog_flags_file,FLAGS): a recipe that writes FLAGS into the target
# unless it holds them already.  Every object depends on that file and the
# file on FORCE (an empty rule of the including Makefile), so objects are
# compiled again when the flags of their directory change (B=dir given,
# CFLAGS, CC), and only then.
elog_flags_file = @mkdir -p $(@D); f='$(subst ','\'',$(strip $(1)))'; \
	[ "$$f" = "$$(cat $@ 2>/dev/null)" ] || printf '%s\n' "$$f" >$@
