#!/bin/sh
# python/tests/run.sh: build the elog package from the tree into a fresh
# virtual environment and run its tests there, for each Python 3 of the
# machine: /usr/bin/python3 (Debian's), and python3 on PATH when it is
# another interpreter (a pyenv one, say).
#
#   python/tests/run.sh [pytest arguments...]
#
# The build is offline, with the setuptools, wheel and pytest Debian
# installs (python/venv.sh).  The sources are copied first (lib/ and
# python/), so that builds of other flags running at the same time never
# share an object.
#
# Environment: ELOG_BIN, the programs' directory for the tests that compare
# with them (default: build/); ELOG_HAVE_ZSTD=0|1, as setup.py reads it;
# ELOG_SANITIZE=1 builds the extension with ASan and UBSan and runs the
# tests with their runtimes preloaded (Debian's interpreter only: it is not
# built with them), leaks not checked (the interpreter's own would be
# reported); ELOG_PY_SEED draws the kill tests' random points again.
set -eu
cd "$(dirname "$0")/../.."
tree=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/elog-py.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/src" "$work/src/python"
cp -r lib "$work/src/lib"
cp -r python/setup.py python/pyproject.toml python/README.md python/src "$work/src/python/"
find "$work/src" \( -name '*.so' -o -name '*.egg-info' -o -name __pycache__ \) -prune \
	-exec rm -rf {} +

pythons=/usr/bin/python3
other=$(command -v python3 || true)
if [ -n "$other" ] && [ "${ELOG_SANITIZE:-0}" != 1 ]; then
	real=$("$other" -c 'import os, sys; print(os.path.realpath(sys.executable))')
	if [ "$real" != "$(realpath /usr/bin/python3)" ]; then
		pythons="$pythons $real"
	fi
fi

preload=
if [ "${ELOG_SANITIZE:-0}" = 1 ]; then
	preload="$(${CC:-cc} -print-file-name=libasan.so) $(${CC:-cc} -print-file-name=libubsan.so)"
fi

status=0
n=0
for py in $pythons; do
	n=$((n + 1))
	venv=$work/venv$n
	echo "== $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"
	python/venv.sh "$py" "$venv" "$work/src/python"
	# The tests import the package installed, never python/src.
	if ! (cd "$tree/python/tests" &&
		PYTHONDONTWRITEBYTECODE=1 ELOG_BIN=${ELOG_BIN:-$tree/build} \
			ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} LD_PRELOAD=$preload \
			"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"); then
		echo "python/tests/run.sh: the tests failed with $py" >&2
		status=1
	fi
done
exit $status
