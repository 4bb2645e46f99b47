# shellcheck shell=bash
# free_port: a TCP port that nothing listens on or uses, outside the
# ephemeral range (so an outgoing connection cannot take it meanwhile), and
# not handed out before in this run.
#
# Callers write port=$(free_port), so free_port runs in a subshell: the ports
# already given are kept in the file $PORTS_GIVEN_FILE, which the sourcing
# script points into its own temporary directory.  (A shell variable would be
# forgotten when the subshell ends, and two calls could return one port.)
free_port() {
        local lo hi p i
        : "${PORTS_GIVEN_FILE:?free_port: PORTS_GIVEN_FILE is not set}"
        read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
        for ((i = 0; i < 200; i++)); do
                if [ "$lo" -gt 12000 ]; then
                        p=$((10000 + RANDOM % (lo - 10000)))
                else
                        p=$((hi + 1 + RANDOM % (65535 - hi)))
                fi
                grep -qx "$p" "$PORTS_GIVEN_FILE" 2>/dev/null && continue
                if [ -z "$(ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null)" ]; then
                        echo "$p" >>"$PORTS_GIVEN_FILE"
                        echo "$p"
                        return 0
                fi
        done
        echo "free_port: no free port found" >&2
        return 1
}
