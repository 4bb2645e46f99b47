#!/usr/bin/env bash
# packaging/build-deb.sh VERSION OUTDIR: builds the Debian packages
# (packaging/debian) from a copy of the source tree, as dpkg-buildpackage
# would from an unpacked source package, puts the .debs in OUTDIR and runs
# lintian on them.  `make deb` runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)

. packaging/source-tree.sh

# A fresh machine has no packaging tools: say which command installs them,
# rather than leave dpkg's "Unmet build dependencies" to be decoded.
missing_tools() {
        echo "build-deb: $1" >&2
        echo "build-deb: install the packaging tools with:  tools/deps.sh package   (as root)" >&2
        exit 1
}
command -v dpkg-buildpackage >/dev/null && command -v dpkg-checkbuilddeps >/dev/null ||
        missing_tools "dpkg-buildpackage is not installed (Debian package dpkg-dev)"
unmet=$(dpkg-checkbuilddeps packaging/debian/control 2>&1) || missing_tools "${unmet#dpkg-checkbuilddeps: error: }"

changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
if [ "${changelog_version%%-*}" != "$version" ]; then
        echo "build-deb: packaging/debian/changelog is at $changelog_version, the Makefile at $version:" >&2
        echo "build-deb: add a changelog entry (dch -v $version)" >&2
        exit 1
fi

stage=$out/deb
rm -rf "$stage"
tree=$stage/spark-deploy-$version
copy_source_tree "$tree"
cp -a packaging/debian "$tree/debian"
rm -f "$out"/spark-*_"$version"_*.deb

echo "build-deb: building in $tree"
(cd "$tree" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$stage/build.log" 2>&1 || {
        tail -n 60 "$stage/build.log" >&2
        echo "build-deb: dpkg-buildpackage failed; the whole log is $stage/build.log" >&2
        exit 1
}
mv "$stage"/*.deb "$out"/
ls -1 "$out"/spark-*_"$version"_*.deb

# Lintian: errors and warnings fail the build.  There are no overrides: a
# tag lintian raises is fixed in the packaging, not silenced.
if command -v lintian >/dev/null; then
        lintian --fail-on error,warning --info "$out"/spark-*_"$version"_*.deb 2>&1 | tee "$stage/lintian.log"
        status=${PIPESTATUS[0]}
        if [ "$status" -ne 0 ]; then
                echo "build-deb: lintian found errors or warnings (see above)" >&2
                exit 1
        fi
        echo "build-deb: lintian: no errors or warnings"
else
        echo "build-deb: lintian is not installed (tools/deps.sh package); skipped"
fi
