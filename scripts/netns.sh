#!/bin/sh
# Runs a command in a private network namespace whose only interface is
# loopback, so that a test (a headless browser above all) can reach nothing
# beyond this machine's 127.0.0.1. Root gets a plain network namespace;
# anyone else a user namespace too (unshare -r), where they may configure it.
# Where neither is permitted (a container without CAP_SYS_ADMIN, user
# namespaces switched off), it says so and runs the command as it is: the
# servers of the tests listen on loopback anyway, only the fence is missing.
# Usage: scripts/netns.sh COMMAND [ARG...]
set -eu
flags=-n
[ "$(id -u)" -eq 0 ] || flags=-rn
if why=$(unshare $flags sh -c 'ip link set lo up' 2>&1); then
	exec unshare $flags sh -c 'ip link set lo up && exec "$@"' netns "$@"
fi
echo "netns.sh: no private network namespace here (unshare $flags: ${why:-failed});" >&2
echo "netns.sh: running without one, so the browser tests are not fenced off from the network" >&2
exec "$@"
