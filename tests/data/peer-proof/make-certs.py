#!/usr/bin/env python3
# Makes the test-only certificates of common/test-peer-proof.c (see README).
# The keys are public: never use them elsewhere.  Run from this directory.
import datetime
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
LONG = NOW + datetime.timedelta(days=36500)


def key():
    return ec.generate_private_key(ec.SECP256R1())


def write_key(name, k):
    with open(name + ".key", "wb") as f:
        f.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()))


def write_cert(name, c):
    with open(name + ".pem", "wb") as f:
        f.write(c.public_bytes(serialization.Encoding.PEM))


def subject(*attrs):
    return x509.Name([x509.NameAttribute(oid, v) for oid, v in attrs])


def make_ca(name):
    k = key()
    s = subject((NameOID.ORGANIZATION_NAME, "spark-deploy"), (NameOID.COMMON_NAME, name))
    c = (x509.CertificateBuilder().subject_name(s).issuer_name(s).public_key(k.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(NOW).not_valid_after(LONG)
         .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
         .sign(k, hashes.SHA256()))
    write_cert(name, c)
    return k, c


def make_leaf(name, ca, ous, cn=None, start=NOW, end=LONG, is_ca=False):
    ca_key, ca_cert = ca
    k = key()
    attrs = [(NameOID.ORGANIZATION_NAME, "spark-deploy")]
    attrs += [(NameOID.ORGANIZATIONAL_UNIT_NAME, ou) for ou in ous]
    attrs.append((NameOID.COMMON_NAME, cn or name))
    c = (x509.CertificateBuilder().subject_name(subject(*attrs)).issuer_name(ca_cert.subject)
         .public_key(k.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(start).not_valid_after(end)
         .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
         .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.DNSName("127.0.0.1"),
                                                     x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                        critical=False)
         .sign(ca_key, hashes.SHA256()))
    write_cert(name, c)
    write_key(name, k)


ca = make_ca("ca")
other = make_ca("other-ca")
make_leaf("server", ca, ["master"], cn="master")
make_leaf("client", ca, ["client"], cn="alice")
make_leaf("admin", ca, ["admin"], cn="ops")
make_leaf("other-ca-client", other, ["client"])
make_leaf("expired", ca, ["client"], start=datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
          end=datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc))
make_leaf("no-ou", ca, [])
make_leaf("two-ou", ca, ["client", "admin"])
make_leaf("bad-role", ca, ["root"])
make_leaf("sub-ca", ca, ["admin"], is_ca=True)
write_key("other", key())
