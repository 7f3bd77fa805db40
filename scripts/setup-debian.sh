#!/usr/bin/env bash
# setup-debian.sh: install the Debian 12 packages that building and testing
# elog need, and nothing else.  Safe to run again: when everything is already
# there it says so in one line and changes nothing.
#
# As root it installs what is missing with apt-get.  As anyone else it prints
# the exact command to run and exits with status 1.
set -euo pipefail

# Each package and why we need it.
packages=(
	build-essential     # gcc, make, libc headers: the build itself
	pkg-config          # finds Check's flags; elog.pc for users
	check               # libcheck: the unit tests (tests/unit)
	bats                # the CLI tests (tests/cli)
	parallel            # bats --jobs: CLI test files side by side
	mandoc              # mandoc -Tlint in make check; reading the man pages
	bsdextrautils       # col: the CLI tests compare a rendered SYNOPSIS with --help
	jq                  # the demo, the CLI tests and examples/ filter JSON lines
	kcat                # examples/: the hand-off to Kafka (test-kafka.sh)
	librdkafka-dev      # examples/kafka-mock: librdkafka's mock Kafka cluster
	sqlite3             # benchmarks and examples, side by side with SQLite
	libsqlite3-dev
	libzstd-dev         # optional value compression
	python3-zstandard   # tests/format: the Python reader of compressed logs
	clang               # fuzzers
	libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for clang
	strace              # a CLI test counts the syncs of a one-shot append
	python3-dev         # python/: the headers of the extension module
	python3-venv        # python/: the tests install the package into a venv
	python3-setuptools  # python/: builds the extension (pip --no-build-isolation)
	python3-wheel       # python/: setuptools builds the wheel pip installs
	python3-pytest      # python/: the package's tests
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	if [ "$status" != installed ]; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "setup-debian: all ${#packages[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-debian: missing packages: ${missing[*]}" >&2
	echo "setup-debian: run this as root, or:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

echo "setup-debian: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup-debian: done"
