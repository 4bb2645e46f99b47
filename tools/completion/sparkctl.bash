# bash completion for sparkctl(1): commands, each command's options, and
# file names where an option takes a file.  Installed as
# /usr/share/bash-completion/completions/sparkctl (loaded on first use).

_sparkctl() {
        local cur prev words cword
        if declare -F _init_completion >/dev/null; then
                _init_completion || return
        else
                cur=${COMP_WORDS[COMP_CWORD]}
                prev=${COMP_WORDS[COMP_CWORD - 1]}
                words=("${COMP_WORDS[@]}")
                cword=$COMP_CWORD
        fi

        local commands="status submit jobs job cancel results logs kill-executor kill-app"
        local global="--help --version --master --driver --app --tls-ca --tls-cert --tls-key"
        local takes_arg="--master --driver --app --tls-ca --tls-cert --tls-key --name --command --function --inputs --count --arg --since"

        # the value of an option that takes one
        case $prev in
        --tls-ca | --tls-cert | --tls-key | --inputs)
                COMPREPLY=($(compgen -f -- "$cur"))
                return
                ;;
        --function)
                # LIB.so:SYMBOL: the library part is a file
                COMPREPLY=($(compgen -f -- "$cur"))
                return
                ;;
        --master | --driver)
                COMPREPLY=($(compgen -W "tcp:// tls+tcp:// ipc://" -- "$cur"))
                compopt -o nospace 2>/dev/null
                return
                ;;
        --since)
                COMPREPLY=($(compgen -W "10m 1h 1d @" -- "$cur"))
                return
                ;;
        --app | --name | --command | --count | --arg)
                return
                ;;
        esac

        # the command word: the first word that is not an option or its value
        local i w command=
        for ((i = 1; i < cword; i++)); do
                w=${words[i]}
                case $w in
                -*) [[ " $takes_arg " == *" $w "* ]] && ((i++)) ;;
                *)
                        command=$w
                        break
                        ;;
                esac
        done

        if [ -z "$command" ]; then
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "$global" -- "$cur"))
                else
                        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                fi
                return
        fi

        local options
        case $command in
        status) options="--json --master" ;;
        submit) options="--name --command --function --inputs --count --arg --json --detach --driver --app" ;;
        jobs | job | results) options="--json --driver --app" ;;
        cancel) options="--driver --app" ;;
        logs) options="--follow --since --master" ;;
        kill-executor | kill-app) options="--master" ;;
        *) return ;;
        esac
        options+=" --help --tls-ca --tls-cert --tls-key"
        if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$options" -- "$cur"))
        fi
}
complete -F _sparkctl sparkctl
