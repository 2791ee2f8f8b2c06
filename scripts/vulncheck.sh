#!/usr/bin/env bash
# Checks the modules and the Go standard library the server is built with
# against the Go vulnerability database, with govulncheck, which reports only
# what our code can reach. The database comes through the Go module proxy, as
# the modules do (golang.org/x/vulndb at its newest version, or at
# VULNDB=VERSION), so this works wherever `go build` can fetch modules, even
# where vuln.go.dev cannot be reached. Exit status 3: something is found.
set -euo pipefail
cd "$(dirname "$0")/.."

GOVULNCHECK=golang.org/x/vuln/cmd/govulncheck@v1.9.0
version=${VULNDB:-$(go list -m -f '{{.Version}}' golang.org/x/vulndb@latest)}
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

# The module holds the reports; its gendb command writes them out in the
# layout govulncheck reads, from a git repository of them.
src=$(go mod download -json "golang.org/x/vulndb@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$src" "$work/vulndb"
chmod -R u+w "$work/vulndb"
git -C "$work/vulndb" init -q
git -C "$work/vulndb" add -A
git -C "$work/vulndb" -c user.name=vulncheck -c user.email=vulncheck@localhost commit -qm "golang.org/x/vulndb@$version"
echo "vulnerability database: golang.org/x/vulndb@$version" >&2
if ! log=$(cd "$work/vulndb" && go run ./cmd/gendb -repo . -out "$work/db" 2>&1); then
	echo "$log" >&2
	exit 1
fi

GOBIN="$work" go install "$GOVULNCHECK"
"$work/govulncheck" -db "file://$work/db" "$@" ./...
