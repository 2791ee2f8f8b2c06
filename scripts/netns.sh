#!/bin/sh
# Runs a command in a private network namespace whose only interface is
# loopback, so that a test (a headless browser above all) can reach nothing
# beyond this machine's 127.0.0.1. Root gets a plain network namespace;
# anyone else a user namespace too (unshare -r), where they may configure it.
# Usage: scripts/netns.sh COMMAND [ARG...]
set -eu
flags=-n
[ "$(id -u)" -eq 0 ] || flags=-rn
exec unshare $flags sh -c 'ip link set lo up && exec "$@"' netns "$@"
