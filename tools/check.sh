#!/bin/sh
# Installs what the tests need (as root), builds, and runs the whole test
# suite: unit tests, then black-box tests of the real daemons against a
# private systemd user manager.  Extra arguments go to make, e.g.
#   tools/check.sh SANITIZE=1
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh test
make "$@" all
make "$@" check
