#!/usr/bin/env bash
# The bash completion of sparkctl (tools/completion/sparkctl.bash): sourced
# into this shell, `complete -p sparkctl` names its function, and the function
# called as bash calls it (COMP_WORDS, COMP_CWORD) offers the commands, each
# command's own options, file names after options that take a file, and
# nothing where a free value goes.  Every command and option it offers is one
# sparkctl --help documents.  Needs no daemon.
. "$(dirname "$0")/../harness/lib.sh"

T=$(harness_tmpdir)
SPARKCTL=$SPARK_BUILD/sparkctl
require_programs sparkctl

# shellcheck source=tools/completion/sparkctl.bash
. "$SPARK_SRC/tools/completion/sparkctl.bash"
check_match "complete -p sparkctl names the function" "^complete -F _sparkctl sparkctl$" "$(complete -p sparkctl)"

# complete WORD...: what the completion offers for the last word (the one
# under the cursor), sorted, on one line.
complete_words() {
        COMP_WORDS=(sparkctl "$@")
        COMP_CWORD=$#
        COMP_LINE="sparkctl $*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _sparkctl sparkctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}" | sort | xargs
}

check_eq "the commands" "cancel job jobs kill-app kill-executor logs results status submit" "$(complete_words '')"
check_eq "commands by prefix" "job jobs" "$(complete_words jo)"
check_eq "kill-..." "kill-app kill-executor" "$(complete_words kill)"
check_eq "global options before the command" "--app --driver --help --master --tls-ca --tls-cert --tls-key --version" \
        "$(complete_words --)"
check_eq "the command after global options and their values" "status" \
        "$(complete_words --master tcp://h:7077 st)"
check_eq "submit's options" "--detach --driver" "$(complete_words submit --d)"
check_eq "submit's options, all of them" \
        "--app --arg --command --count --detach --driver --function --help --inputs --json --name --tls-ca --tls-cert --tls-key" \
        "$(complete_words submit --)"
check_eq "status's options" "--help --json --master --tls-ca --tls-cert --tls-key" "$(complete_words status --)"
check_eq "results's options" "--app --driver --help --json --tls-ca --tls-cert --tls-key" \
        "$(complete_words results job-0001 --)"
check_eq "no --json for kill-app" "" "$(complete_words kill-app --j)"
check_eq "logs's options" "--follow --help --master --since --tls-ca --tls-cert --tls-key" \
        "$(complete_words logs app-20261129172233-0001 --)"
check_eq "times after --since" "10m 1d 1h @" "$(complete_words logs app-20261129172233-0001 --since '')"
mkdir -p "$T/files" && touch "$T/files/inputs.txt" "$T/files/ca.pem"
check_eq "a file after --inputs" "$T/files/inputs.txt" "$(complete_words submit --inputs "$T/files/in")"
check_eq "a file after --tls-ca" "$T/files/ca.pem" "$(complete_words --tls-ca "$T/files/c")"
check_eq "schemes after --master" "ipc:// tcp:// tls+tcp://" "$(complete_words --master '')"
check_eq "nothing offered for a free value (--count)" "" "$(complete_words submit --count '')"
check_eq "the command word is found after an option's value" "--detach --driver" \
        "$(complete_words --app etl submit --d)"

# What it offers, sparkctl knows: every command has a --help of its own, and
# every option is in sparkctl --help.
help=$("$SPARKCTL" --help)
for c in $(complete_words ''); do
        check "sparkctl $c --help works" quietly "$SPARKCTL" "$c" --help
        for o in $(complete_words "$c" --); do
                grep -q -- "$o" <<<"$help" || fail "$o (offered for $c) is not in sparkctl --help"
        done
done
check_match "sparkctl submit --help is about submit" "^Usage: sparkctl .*submit" "$("$SPARKCTL" submit --help)"
check_match "sparkctl results --help says what results does" "task outputs in task order" \
        "$("$SPARKCTL" results --help)"
out=$("$SPARKCTL" frobnicate --help 2>&1)
check_eq "sparkctl UNKNOWN --help is a usage error" 2 "$("$SPARKCTL" frobnicate --help >/dev/null 2>&1; echo $?)"
check_match "... naming the command" "unknown command 'frobnicate'" "$out"
