#!/usr/bin/env bash
# packaging/build-rpm.sh VERSION OUTDIR: builds the RPM packages from
# packaging/rpm/spark-deploy.spec and a tarball of the source tree, puts the
# .rpms in OUTDIR and runs rpmlint on them when it is installed.  `make rpm`
# runs this.  On Debian, rpmbuild cannot see the build dependencies (they
# are dpkg's), hence --nodeps; `make deb` checks the same ones.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)

. packaging/source-tree.sh

if ! command -v rpmbuild >/dev/null; then
        echo "build-rpm: rpmbuild is not installed (Debian package rpm)" >&2
        echo "build-rpm: install the packaging tools with:  tools/deps.sh package   (as root)" >&2
        exit 1
fi

stage=$out/rpm
rm -rf "$stage"
mkdir -p "$stage"/{BUILD,RPMS,SOURCES,SPECS,SRPMS}
copy_source_tree "$stage/src/spark-deploy-$version"
tar -C "$stage/src" -czf "$stage/SOURCES/spark-deploy-$version.tar.gz" "spark-deploy-$version"
cp packaging/rpm/spark-deploy.spec "$stage/SPECS/"
rm -f "$out"/spark-*-"$version"-*.rpm

echo "build-rpm: building in $stage"
rpmbuild -bb --nodeps --define "_topdir $stage" --define "spark_version $version" \
        --define "_smp_mflags -j$(nproc)" "$stage/SPECS/spark-deploy.spec" >"$stage/build.log" 2>&1 || {
        tail -n 60 "$stage/build.log" >&2
        echo "build-rpm: rpmbuild failed; the whole log is $stage/build.log" >&2
        exit 1
}
find "$stage/RPMS" -name '*.rpm' -exec mv {} "$out"/ \;
ls -1 "$out"/spark-*-"$version"-*.rpm

# rpmlint: errors fail the build; what it says about the packages is
# justified in packaging/rpm/rpmlintrc.
if command -v rpmlint >/dev/null; then
        rpmlint -c packaging/rpm/rpmlint.toml -r packaging/rpm/rpmlintrc "$stage/SPECS/spark-deploy.spec" "$out"/spark-*-"$version"-*.rpm \
                2>&1 | tee "$stage/rpmlint.log"
        status=${PIPESTATUS[0]}
        if [ "$status" -ne 0 ]; then
                echo "build-rpm: rpmlint found errors (see above)" >&2
                exit 1
        fi
else
        echo "build-rpm: rpmlint is not installed (tools/deps.sh package); skipped"
fi
