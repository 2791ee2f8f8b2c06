#!/usr/bin/env bash
# The API reference's checks, run by make check:
#   1. control/openapi.json lints clean (no error, no warning) under Redocly
#      CLI, the version pinned in package.json and package-lock.json, run
#      with npx from the tools installed here;
#   2. the Redoc bundle served at /docs (web/reference) is byte for byte the
#      one of the pinned redoc package, so the committed asset is rebuilt
#      from the lockfile alone.
# Usage: scripts/apidocs/check.sh [--update]
#   --update copies the pinned bundle and its licence notice into web/reference
#   (after a change of the redoc version in package.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$here"

command -v npm >/dev/null 2>&1 || bash "$root/scripts/install-deps.sh" check

# npm ci reinstalls from the lockfile; it runs again only when the lockfile
# changed since the last install (node_modules is not committed).
stamp=node_modules/.pulsewire-lock-sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "installing the pinned Redocly CLI and Redoc (npm ci)..." >&2
	npm ci --no-audit --no-fund --loglevel=error
	echo "$want" >"$stamp"
fi

npx --no-install redocly lint --config redocly.yaml "$root/control/openapi.json"

mkdir -p "$root/web/reference"
for f in redoc.standalone.js redoc.standalone.js.LICENSE.txt; do
	if [ "${1:-}" = --update ]; then
		cp "node_modules/redoc/bundles/$f" "$root/web/reference/$f"
	elif ! cmp -s "node_modules/redoc/bundles/$f" "$root/web/reference/$f"; then
		echo "web/reference/$f is not the pinned redoc's $f: run scripts/apidocs/check.sh --update" >&2
		exit 1
	fi
done
echo "openapi.json lints clean; web/reference holds redoc $(node -p "require('./node_modules/redoc/package.json').version")'s bundle"
