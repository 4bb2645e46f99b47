# shellcheck shell=bash
# Executor units run with PrivateTmp=yes (spark-worker(8), "Executor
# sandbox"): the programs they start must not lie under /tmp or /var/tmp,
# which they do not see.  usable_build_dir DIR prints DIR, or, when DIR is
# below one of those, the path of a copy of it under $SPARK_TEST_ROOT; a
# caller given another path than DIR removes that copy when it is done.
usable_build_dir() {
        local dir root copy
        dir=$(realpath "$1") || return 1
        case $dir/ in
        /tmp/* | /var/tmp/*)
                root=${SPARK_TEST_ROOT:-/var/lib/spark-test}
                mkdir -p "$root" && copy=$(mktemp -d "$root/build.XXXXXX") &&
                        cp -a "$dir/." "$copy/" || return 1
                echo "$copy"
                ;;
        *) echo "$dir" ;;
        esac
}
