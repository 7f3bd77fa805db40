#!/bin/sh
# python/venv.sh: make a fresh virtual environment and install the elog
# package into it from the tree, offline.
#
#   python/venv.sh PYTHON VENV [SOURCE]
#
# PYTHON is the interpreter; SOURCE the package's directory (default: this
# one; python/tests/run.sh gives a copy).  The build is `pip install
# --no-build-isolation --no-index`: PyPI is never asked, and setuptools,
# wheel (and pytest, for the tests) are those Debian installs
# (scripts/setup-debian.sh), seen through the venv: --system-site-packages
# for Debian's interpreter, and for another one (pyenv's, say) a .pth file
# naming Debian's dist-packages, read after the venv's own.
# ELOG_HAVE_ZSTD and ELOG_SANITIZE go to setup.py.
set -eu
py=$1 venv=$2
src=${3:-$(cd "$(dirname "$0")" && pwd)}
"$py" -m venv --system-site-packages "$venv"
if ! "$venv/bin/python" -c 'import setuptools, wheel, pytest' 2>/dev/null; then
	site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	echo /usr/lib/python3/dist-packages >"$site/debian-dist-packages.pth"
fi
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-index "$src"
