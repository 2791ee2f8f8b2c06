#!/usr/bin/env bash
# Installs the Debian packages PulseWire runs or tests with, only when a
# command they provide is missing. Usage: install-deps.sh run|test|check
#   run:   ffmpeg (video decoding), heif-convert (HEIC images)
#   test:  the above plus chromium (browser end-to-end tests) and iproute2 (their network namespace)
#   check: node and npm (Redocly CLI lints the OpenAPI document; scripts/apidocs)
set -euo pipefail

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
fi
[ ${#need[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing ${need[*]} from Debian (once)..." >&2
# Another apt run at the same moment can make one install fail with a missing
# .deb; a second attempt after a fresh update succeeds.
for attempt in 1 2 3; do
	if $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; then
		exit 0
	fi
	echo "apt-get failed (attempt $attempt), retrying..." >&2
	sleep 5
done
exit 1
