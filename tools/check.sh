#!/bin/sh
# Installs what the tests need (as root), builds, and runs the whole test
# suite: unit tests, then black-box tests of the real daemons against a
# private systemd user manager.  Extra arguments go to make, e.g.
#   tools/check.sh SANITIZE=1
set -eu
cd "$(dirname "$0")/.."
# The user manager of the black-box tests needs root (cgroups, mount
# namespaces): raise ourselves only then, and only where sudo exists (a
# fresh container or CI is root already and has no sudo).
if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null; then
                exec sudo -- "$0" "$@"
        fi
        echo "tools/check.sh: the tests need root (a private systemd manager); run it as root" >&2
        exit 1
fi
tools/deps.sh test
make "$@" all
make "$@" check
