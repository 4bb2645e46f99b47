#!/usr/bin/env bash
# The packages' contents, without installing them: each .deb (dpkg-deb) and
# each .rpm (rpm -qpl) holds exactly the files of its package (docs/DESIGN.md §8)
# split, the configuration files are conffiles / %config(noreplace), and
# the maintainer scripts do what debian/rules and the spec promise.
. "$(dirname "$0")/lib.sh"

V=$(package_version)

# Files of each package, as both formats must ship them (units in
# /lib/systemd/system on Debian 12, /usr/lib/systemd/system on RPM
# systems).
expected() {
        local pkg=$1 unitdir=$2
        case $pkg in
        spark-common) printf '%s\n' /etc/spark/cluster.conf /usr/bin/sparkctl /usr/lib/sysusers.d/spark.conf \
                /usr/lib/tmpfiles.d/spark.conf /usr/share/man/man1/sparkctl.1.gz \
                /usr/bin/spark-tls /usr/share/man/man1/spark-tls.1.gz /usr/share/man/man5/spark.conf.5.gz \
                /usr/include/spark/task.h /usr/share/man/man3/spark-task.3.gz \
                /usr/share/bash-completion/completions/sparkctl /usr/share/man/man7/spark-observability.7.gz \
                /usr/share/spark/grafana/spark-dashboard.json /usr/share/spark/prometheus/spark-alerts.yml ;;
        spark-master) printf '%s\n' /etc/spark/master.conf /usr/sbin/spark-master "$unitdir/spark-master.service" \
                /usr/share/man/man8/spark-master.8.gz ;;
        spark-worker) printf '%s\n' /etc/spark/worker.conf /usr/sbin/spark-worker /usr/lib/spark/spark-executor \
                "$unitdir/spark-worker.service" "$unitdir/spark-executors.slice" /usr/lib/tmpfiles.d/spark-worker.conf \
                /usr/share/man/man8/spark-worker.8.gz /usr/share/man/man8/spark-executor.8.gz ;;
        spark-driver) printf '%s\n' /etc/spark/driver.conf /usr/sbin/spark-driver "$unitdir/spark-driver.service" \
                "$unitdir/spark-driver@.service" /usr/share/man/man8/spark-driver.8.gz ;;
        esac | sort
}

# Regular files and symlinks, without /usr/share/doc (and the licence).
deb_files() {
        dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's|^\./|/|' | grep -v '/$' |
                grep -Ev '^/usr/share/doc/' | sort
}

rpm_files() {
        rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms}\n]' "$1" 2>/dev/null | awk '$2 !~ /^d/ { print $1 }' |
                grep -Ev '^/usr/share/(doc|licenses)/|^/usr/lib/\.build-id' | sort
}

echo "# Debian packages $V in $SYSTEM_PACKAGES"
for p in spark-common spark-master spark-worker spark-driver; do
        deb=$(ls "$SYSTEM_PACKAGES/${p}_${V}_"*.deb 2>/dev/null | head -n 1)
        if [ -z "$deb" ]; then
                fail "$p: no .deb (make deb)"
                continue
        fi
        check_eq "$p.deb holds exactly its files (programs, units, conf, manual pages)" "$(expected $p /lib/systemd/system)" "$(deb_files "$deb")"
        conf=$(expected $p x | grep '^/etc/spark/')
        check_eq "$p.deb: $conf is a conffile" "$conf" \
                "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)"
        [ $p = spark-common ] || check_match "$p.deb depends on spark-common of the same version" \
                "spark-common \(= $V\)" "$(dpkg-deb -f "$deb" Depends)"
done
worker_deb=$(ls "$SYSTEM_PACKAGES/spark-worker_${V}_"*.deb | head -n 1)
scripts=$TEST_TMPDIR/worker-control
dpkg-deb -e "$worker_deb" "$scripts"
check_match "spark-worker's postinst try-restarts the worker on upgrade" "try-restart 'spark-worker.service'" \
        "$(cat "$scripts/postinst")"
check_fails "and never restarts spark-executors.slice (that would restart every executor)" \
        grep -q "restart.*spark-executors.slice" "$scripts/postinst"
check_match "its prerm stops the worker and the executors on removal" "stop spark-executors.slice" "$(cat "$scripts/prerm")"
common_deb=$(ls "$SYSTEM_PACKAGES/spark-common_${V}_"*.deb | head -n 1)
check_match "spark-common's postinst creates the spark user (systemd-sysusers)" "systemd-sysusers .*spark.conf" \
        "$(dpkg-deb --ctrl-tarfile "$common_deb" | tar -xO ./postinst)"
check_match "spark-common's postrm removes /var/lib/spark on purge" "rm -rf /var/lib/spark" \
        "$(dpkg-deb --ctrl-tarfile "$common_deb" | tar -xO ./postrm)"
for p in spark-common spark-master spark-worker spark-driver; do
        deb=$(ls "$SYSTEM_PACKAGES/${p}_${V}_"*.deb | head -n 1)
        check_match "$p.deb: its copyright file says Apache-2.0" "^License: Apache-2.0$" \
                "$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/share/doc/$p/copyright")"
done

echo "# RPM packages $V in $SYSTEM_PACKAGES"
if ! command -v rpm >/dev/null; then
        fail "rpm is not installed (apt-get install rpm)"
else
        for p in spark-common spark-master spark-worker spark-driver; do
                r=$(ls "$SYSTEM_PACKAGES/$p-$V-"*.rpm 2>/dev/null | grep -v -- '-debug' | head -n 1)
                if [ -z "$r" ]; then
                        fail "$p: no .rpm (make rpm)"
                        continue
                fi
                check_eq "$p.rpm holds exactly its files (rpm -qpl)" "$(expected $p /usr/lib/systemd/system)" \
                        "$(rpm_files "$r")"
                check_eq "$p.rpm: its /etc/spark file is %config(noreplace)" \
                        "$(expected $p x | grep '^/etc/spark/')" \
                        "$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$r" | awk '$2 ~ /c/ && $2 ~ /n/ { print $1 }')"
        done
        check_eq "every .rpm says License: Apache-2.0" "Apache-2.0 Apache-2.0 Apache-2.0 Apache-2.0" \
                "$(for p in spark-common spark-master spark-worker spark-driver; do
                        rpm -qp --qf '%{LICENSE}\n' "$(ls "$SYSTEM_PACKAGES/$p-$V-"*.rpm | grep -v -- -debug | head -n 1)"
                done | xargs)"
        check_match "spark-common.rpm carries the licence text" "/usr/share/licenses/spark-common[^/]*/LICENSE" \
                "$(rpm -qpl "$(ls "$SYSTEM_PACKAGES/spark-common-$V-"*.rpm | grep -v -- -debug | head -n 1)")"
        r=$(ls "$SYSTEM_PACKAGES/spark-worker-$V-"*.rpm | head -n 1)
        check_match "spark-worker.rpm: %systemd_postun_with_restart try-restarts the worker" \
                "try-restart spark-worker.service|mark-restart-system-units spark-worker.service" \
                "$(rpm -qp --scripts "$r")"
        r=$(ls "$SYSTEM_PACKAGES/spark-driver-$V-"*.rpm | head -n 1)
        check_fails "spark-driver.rpm: an upgrade does not restart the driver" \
                grep -Eq "restart.*spark-driver" <<<"$(rpm -qp --scripts "$r")"
fi
