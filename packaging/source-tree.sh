# shellcheck shell=bash
# copy_source_tree DEST: the files of the source tree, as a fresh clone has
# them (git's tracked and untracked-but-not-ignored files; everything but
# build output without git), copied to DEST.  Sourced by build-deb.sh and
# build-rpm.sh from the top of the tree.
copy_source_tree() {
        local dest=$1
        mkdir -p "$dest"
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                git ls-files -z --cached --others --exclude-standard |
                        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
                        tar --null -T - -cf - | tar -xf - -C "$dest"
        else
                tar --exclude=./build --exclude=./build-san --exclude=./build-fuzz --exclude=./.git \
                        -cf - . | tar -xf - -C "$dest"
        fi
}
