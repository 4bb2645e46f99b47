#!/bin/sh
# spark-tls.sh: the certificates of a spark-deploy cluster over mutual TLS
# (cluster.tls_ca_file, tls_cert_file, tls_key_file in cluster.conf).
#
#   spark-tls.sh ca DIR
#       A new cluster CA: DIR/ca.pem (its certificate: give it to every
#       host) and DIR/ca.key (its key: keep it off the cluster).
#   spark-tls.sh host DIR NAME [NAME|ADDRESS...]
#       A key and a certificate signed by DIR's CA for a host reached as
#       NAME (and the other names and addresses given): DIR/NAME.pem and
#       DIR/NAME.key.  localhost, 127.0.0.1 and ::1 are always added, so
#       that sparkctl and the daemons of one host reach each other locally.
#
# Options (before the command): --days N  validity (CA: 3650, host: 825).
#
# Keys are EC P-256, written with mode 0600.  Install the host files as the
# spark user can read them, e.g.
#   install -m 0644 DIR/ca.pem DIR/node-1.pem /etc/spark/tls/
#   install -m 0640 -g spark DIR/node-1.key /etc/spark/tls/
# Every peer checks that the certificate it is shown was signed by the CA;
# a dialer also checks the host name of the URL it dials against the
# certificate.  (mbedTLS, which nng uses, matches IP addresses only as DNS
# names: addresses are written both ways.)
set -eu

prog=$(basename "$0")
days=

usage() {
        cat >&2 <<EOF
usage: $prog [--days N] ca DIR
       $prog [--days N] host DIR NAME [NAME|ADDRESS...]
  ca    a new cluster CA in DIR (ca.pem, ca.key)
  host  a certificate signed by DIR's CA for NAME (DIR/NAME.pem, DIR/NAME.key)
EOF
        exit 2
}

die() {
        echo "$prog: $*" >&2
        exit 1
}

command -v openssl >/dev/null 2>&1 || die "openssl is not installed"

while [ $# -gt 0 ]; do
        case $1 in
        --days)
                [ $# -ge 2 ] || usage
                days=$2
                shift 2
                ;;
        --days=*)
                days=${1#--days=}
                shift
                ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) usage ;;
        *) break ;;
        esac
done
case $days in
'') ;;
*[!0-9]*|0) die "--days needs a positive number of days" ;;
esac
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
shift 2

# An EC P-256 key, readable by its owner only.
new_key() {
        (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null) ||
                die "cannot create the key $1"
}

serial() {
        echo "0x$(openssl rand -hex 16)"
}

is_address() {
        case $1 in
        *:*) return 0 ;; # IPv6
        *[!0-9.]*) return 1 ;;
        *.*.*.*) return 0 ;;
        *) return 1 ;;
        esac
}

valid_name() {
        case $1 in
        ''|*[!A-Za-z0-9.:_-]*|-*|.*) return 1 ;;
        *) return 0 ;;
        esac
}

make_ca() {
        [ $# -eq 0 ] || usage
        mkdir -p "$dir"
        [ ! -e "$dir/ca.key" ] || die "$dir/ca.key exists: a new CA would invalidate every host certificate"
        new_key "$dir/ca.key"
        openssl req -new -x509 -key "$dir/ca.key" -out "$dir/ca.pem" -days "${days:-3650}" -sha256 \
                -set_serial "$(serial)" -subj "/O=spark-deploy/CN=spark-deploy cluster CA $(date +%Y-%m-%d)" \
                -addext "basicConstraints=critical,CA:TRUE" \
                -addext "keyUsage=critical,keyCertSign,cRLSign" \
                -addext "subjectKeyIdentifier=hash" 2>/dev/null ||
                die "cannot create the CA certificate"
        chmod 0644 "$dir/ca.pem"
        echo "$dir/ca.pem: the cluster CA (cluster.tls_ca_file on every host)"
        echo "$dir/ca.key: its key, to sign host certificates; keep it off the cluster"
}

make_host() {
        [ $# -ge 1 ] || usage
        name=$1
        valid_name "$name" || die "invalid host name '$name'"
        if [ ! -f "$dir/ca.pem" ] || [ ! -f "$dir/ca.key" ]; then
                die "no CA in $dir: run '$prog ca $dir' first"
        fi

        san=''
        seen=' '
        for n in "$@" localhost 127.0.0.1 ::1; do
                valid_name "$n" || die "invalid host name or address '$n'"
                case $seen in *" $n "*) continue ;; esac
                seen="$seen$n "
                if is_address "$n"; then
                        san="$san,IP:$n"
                        # mbedTLS 2 compares the dialled host with DNS names only
                        case $n in *:*) ;; *) san="$san,DNS:$n" ;; esac
                else
                        san="$san,DNS:$n"
                fi
        done
        san=${san#,}

        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        cat >"$tmp/ext" <<EOF
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyAgreement
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = $san
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
        new_key "$tmp/key"
        openssl req -new -key "$tmp/key" -out "$tmp/csr" -subj "/O=spark-deploy/CN=$name" 2>/dev/null ||
                die "cannot create the certificate request"
        openssl x509 -req -in "$tmp/csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -set_serial "$(serial)" \
                -days "${days:-825}" -sha256 -extfile "$tmp/ext" -out "$tmp/pem" 2>/dev/null ||
                die "cannot sign the certificate"
        mv "$tmp/key" "$dir/$name.key"
        mv "$tmp/pem" "$dir/$name.pem"
        chmod 0644 "$dir/$name.pem"
        echo "$dir/$name.pem: certificate of $name for $(echo "$san" | sed 's/,/, /g') (cluster.tls_cert_file)"
        echo "$dir/$name.key: its key (cluster.tls_key_file), readable by the spark user only"
}

case $cmd in
ca) make_ca "$@" ;;
host) make_host "$@" ;;
*) usage ;;
esac
