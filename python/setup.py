"""Build the extension elog._elog: src/elog/_elog.c and libelog's sources
(../lib/*.c), compiled together, so that `pip install ./python` works from a
fresh clone with no `make` first.

    python3 -m venv .venv && .venv/bin/pip install --no-build-isolation ./python

zstd is used when pkg-config finds libzstd, as the top Makefile does
(mk/flags.mk); ELOG_HAVE_ZSTD=0 or 1 in the environment decides instead.
ELOG_SANITIZE=1 builds with ASan and UBSan (see tests/run.sh).  The
extension uses the stable ABI (abi3, Python 3.9 and later).
"""

import glob
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# setuptools builds a wheel with the package wheel, which a venv of an
# interpreter of its own (pyenv's) or one made without
# --system-site-packages lacks, and which --no-build-isolation does not
# fetch: Debian's (python3-wheel, pure Python) serves then, found after
# everything the interpreter has.
cmdclass = {}
try:
    from wheel.bdist_wheel import bdist_wheel  # noqa: F401
except ImportError:
    DEBIAN = "/usr/lib/python3/dist-packages"
    if os.path.isdir(os.path.join(DEBIAN, "wheel")):
        sys.path.append(DEBIAN)
        from wheel.bdist_wheel import bdist_wheel

        cmdclass["bdist_wheel"] = bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(os.path.dirname(HERE), "lib")

if not os.path.isfile(os.path.join(LIB, "elog.h")):
    sys.exit(
        f"setup.py: {LIB}/elog.h not found: build the package from the elog source tree "
        "(pip install --no-build-isolation ./python at its top)"
    )


def pkg_config(*args):
    if shutil.which("pkg-config") is None:
        return None
    r = subprocess.run(["pkg-config", *args], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


have_zstd = os.environ.get("ELOG_HAVE_ZSTD")
if have_zstd is None:
    have_zstd = "1" if pkg_config("--exists", "libzstd") is not None else "0"
if have_zstd not in ("0", "1"):
    sys.exit("setup.py: ELOG_HAVE_ZSTD must be 0 or 1")

# -O2, after Python's own CFLAGS: the level the Makefile builds and tests
# the library at.
cflags = ["-O2", "-std=c11", "-D_GNU_SOURCE", "-pthread", "-Wall", "-Wextra", "-Werror",
          "-Wno-missing-field-initializers", "-fvisibility=hidden"]
ldflags = ["-pthread"]
macros = []
libs = []
if have_zstd == "1":
    macros.append(("ELOG_HAVE_ZSTD", None))
    cflags += pkg_config("--cflags", "libzstd") or []
    libs += [f[2:] for f in (pkg_config("--libs", "libzstd") or ["-lzstd"]) if f.startswith("-l")]
if os.environ.get("ELOG_SANITIZE") == "1":
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
           "-fno-sanitize-recover=all"]
    cflags += san + ["-O1", "-g"]
    ldflags += san

# Relative to this directory, as setuptools wants them.
sources = ["src/elog/_elog.c"] + sorted(
    os.path.relpath(p, HERE) for p in glob.glob(os.path.join(LIB, "*.c"))
)


class BuildExt(build_ext):
    """build_ext that compiles every source each time, side by side
    (libelog is some fifty files), inside build_temp, and names the zstd
    choice."""

    def build_extensions(self):
        # Always compiled again: setuptools would keep objects compiled
        # with other flags (ELOG_SANITIZE, ELOG_HAVE_ZSTD) or older headers.
        self.force = True
        cc = self.compiler
        orig = cc.compile

        def one(src, args, kw):
            # -Werror for the binding's own file only: libelog is held to
            # it by its Makefile, at its flags; here Python's own CFLAGS
            # come first (-O3 for some interpreters, whose extra warnings
            # must not stop an install).
            if os.path.dirname(src) == LIB:
                kw = dict(kw, extra_postargs=[f for f in kw.get("extra_postargs") or []
                                              if f != "-Werror"])
            return orig([src], *args, **kw)

        def compile_parallel(srcs, *args, **kw):
            # Absolute paths keep the objects of ../lib inside build_temp.
            srcs = [os.path.abspath(s) for s in srcs]
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
                parts = list(ex.map(lambda s: one(s, args, kw), srcs))
            return [o for p in parts for o in p]

        cc.compile = compile_parallel
        print(f"elog: building with{'' if have_zstd == '1' else 'out'} zstd", file=sys.stderr)
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "elog._elog",
            sources=sources,
            depends=sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(LIB, "*.h"))),
            include_dirs=[os.path.relpath(LIB, HERE)],
            define_macros=macros,
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            libraries=libs,
            py_limited_api=True,
        )
    ],
    cmdclass={**cmdclass, "build_ext": BuildExt},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
