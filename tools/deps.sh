#!/bin/sh
# Makes sure the Debian packages spark-deploy needs are installed:
#   tools/deps.sh [build|test|package|bench]
# (package: what make deb and make rpm need besides the build: debhelper,
# dpkg-dev, rpm and the linters lintian and rpmlint; bench: make bench's
# rows against GNU parallel)
# As root it installs what is missing with apt-get; otherwise it names the
# one command that does and fails.
set -eu

build="build-essential pkg-config libsystemd-dev libconfig-dev libnng-dev libmbedtls-dev libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libzookeeper-mt-dev check"
# the demo and the tests run a systemd user manager with its D-Bus
run="systemd dbus dbus-user-session util-linux iproute2 procps"
case "${1:-build}" in
build) want="$build $run" ;;
# the zookeeper recovery mode's tests run a real ensemble (Java)
test) want="$build $run clang openssl jq python3 curl prometheus chromium chromium-driver zookeeper" ;;
package) want="$build debhelper dpkg-dev rpm lintian rpmlint" ;;
# make bench: its rows against GNU parallel (bench/README.md)
bench) want="$build $run parallel" ;;
*) echo "usage: $0 [build|test|package|bench]" >&2; exit 2 ;;
esac

missing=
for p in $want; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
        echo "Installing:$missing" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >&2
        # shellcheck disable=SC2086
        apt-get install -y -q --no-install-recommends $missing </dev/null >&2
else
        echo "Missing Debian packages:$missing" >&2
        echo "Install them with:  sudo apt-get install -y$missing" >&2
        exit 1
fi
