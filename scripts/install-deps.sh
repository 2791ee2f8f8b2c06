#!/usr/bin/env bash
# Installs what PulseWire runs, tests or checks with, only when it is missing.
# Usage: install-deps.sh run|test|check
#   run:   ffmpeg (video decoding), heif-convert (HEIC images)
#   test:  the above plus chromium (browser end-to-end tests), iproute2 (their
#          network namespace), postgresql and haproxy (the tests of several
#          instances), and versitygw, an S3-compatible server, built from its
#          pinned module into bin/ (the media tests on an object store)
#   check: node and npm (Redocly CLI lints the OpenAPI document; scripts/apidocs)
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the version the tests were written against.
VERSITYGW=github.com/versity/versitygw/cmd/versitygw@v1.8.0

need=()
if [ "${1:-run}" = check ]; then
	command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
else
	command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
	command -v heif-convert >/dev/null 2>&1 || need+=(libheif-examples)
fi
if [ "${1:-run}" = test ]; then
	command -v chromium >/dev/null 2>&1 || need+=(chromium)
	command -v ip >/dev/null 2>&1 || need+=(iproute2) # scripts/netns.sh
	# Debian keeps the server out of PATH, under /usr/lib/postgresql/<version>/bin.
	compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
	command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
fi

if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "installing ${need[*]} from Debian (once)..." >&2
	# Another apt run at the same moment holds the lock: wait for it. It can
	# also make one install fail with a missing .deb; a second attempt after
	# a fresh update succeeds.
	ok=""
	for attempt in 1 2 3; do
		if $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null; then
			ok=1
			break
		fi
		echo "apt-get failed (attempt $attempt), retrying..." >&2
		sleep 5
	done
	[ -n "$ok" ] || exit 1
fi

if [ "${1:-run}" = test ] && [ ! -x bin/versitygw ]; then
	echo "building $VERSITYGW into bin/ (once; its modules take a few minutes to download)..." >&2
	GOBIN="$PWD/bin" go install "$VERSITYGW"
fi
