"""A private Kafka broker with SASL and TLS listeners, and the TLS material it needs.

Listeners (ports from THREADLINE_SECURITY_KAFKA_PORT, default 29192, upwards):
  +0 PLAINTEXT (readiness probe, admin: creates the SCRAM users)   +1 CONTROLLER
  +2 SASL_PLAINTEXT: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  +3 SSL with client authentication required (mutual TLS)
  +4 SASL_SSL: SCRAM-SHA-512 over TLS
The broker gets them through THREADLINE_KAFKA_EXTRA_PROPERTIES (scripts/lib/kafka.sh).
"""

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.faults.private import ROOT, PrivateServices
from tests.security.oidc_issuer import issuer

__all__ = ["issuer"]  # the OIDC issuer fixture, for every test module here

BASE_PORT = int(os.environ.get("THREADLINE_SECURITY_KAFKA_PORT", "29192"))
USER, PASSWORD = "threadline-svc", "s3cret-Passw0rd"
KEYSTORE_PASSWORD = "keystore-pass"
JAAS = {
    "plain": "org.apache.kafka.common.security.plain.PlainLoginModule required"
    f' user_{USER}="{PASSWORD}";',
    "scram": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
}


@dataclass(frozen=True, slots=True)
class Tls:
    ca: Path
    client_cert: Path
    client_key: Path
    broker_keystore: Path
    other_ca: Path  # a CA that did not sign the broker: verification must fail


@dataclass(frozen=True, slots=True)
class SecureKafka:
    plaintext: str
    sasl_plaintext: str
    ssl: str
    sasl_ssl: str
    tls: Tls


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _sign(cwd: Path, name: str, subject: str, san: str) -> None:
    """name.key + name.crt signed by ca.key, with the given subjectAltName."""
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-subj", subject,
             "-out", f"{name}.csr", cwd=cwd)  # fmt: skip
    (cwd / f"{name}.ext").write_text(f"subjectAltName={san}\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
             cwd=cwd)  # fmt: skip


def make_tls(cwd: Path) -> Tls:
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-subj", f"/CN=threadline-test-{ca}", "-keyout", f"{ca}.key", "-out", f"{ca}.crt",
                 cwd=cwd)  # fmt: skip
    _sign(cwd, "broker", "/CN=localhost", "IP:127.0.0.1,DNS:localhost")
    _sign(cwd, "client", "/CN=threadline-consumer", "DNS:threadline-consumer")
    _openssl("pkcs12", "-export", "-in", "broker.crt", "-inkey", "broker.key",
             "-certfile", "ca.crt", "-out", "broker.p12", "-passout", f"pass:{KEYSTORE_PASSWORD}",
             cwd=cwd)  # fmt: skip
    return Tls(cwd / "ca.crt", cwd / "client.crt", cwd / "client.key", cwd / "broker.p12",
               cwd / "other-ca.crt")  # fmt: skip


def broker_properties(tls: Tls) -> str:
    p = BASE_PORT
    listeners = {
        "PLAINTEXT": p,
        "CONTROLLER": p + 1,
        "SASL_PLAINTEXT": p + 2,
        "SSL": p + 3,
        "SASL_SSL": p + 4,
    }
    advertised = [f"{name}://127.0.0.1:{port}" for name, port in listeners.items()]
    lines = [
        "listeners=" + ",".join(f"{name}://127.0.0.1:{port}" for name, port in listeners.items()),
        "advertised.listeners=" + ",".join(a for a in advertised if "CONTROLLER" not in a),
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,"
        "SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL",
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS['plain']}",
        f"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config={JAAS['scram']}",
        f"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config={JAAS['scram']}",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512",
        f"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config={JAAS['scram']}",
        "ssl.keystore.type=PKCS12",
        f"ssl.keystore.location={tls.broker_keystore}",
        f"ssl.keystore.password={KEYSTORE_PASSWORD}",
        f"ssl.key.password={KEYSTORE_PASSWORD}",
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={tls.ca}",
        "listener.name.ssl.ssl.client.auth=required",
    ]
    return "\n".join(lines)


def add_scram_user(bootstrap: str) -> None:
    """SCRAM credentials live in the cluster metadata: created through the admin API,
    one mechanism per request (the broker refuses two changes of one user at once)."""
    command = (
        "source scripts/lib/common.sh && kafka_tool kafka.admin.ConfigCommand"
        ' --bootstrap-server "$1" --alter --add-config "$2" --entity-type users --entity-name "$3"'
    )
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        result = subprocess.run(
            ["bash", "-c", command, "_", bootstrap, f"{mechanism}=[password={PASSWORD}]", USER],
            cwd=ROOT,
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise RuntimeError(f"creating the {mechanism} user failed:\n{result.stderr[-3000:]}")


@pytest.fixture(scope="session")
def secure_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    tls = make_tls(tmp_path_factory.mktemp("tls"))
    private = PrivateServices(
        "security", BASE_PORT, BASE_PORT + 1, BASE_PORT + 5, broker_properties(tls)
    )
    try:
        private.start("kafka")
        add_scram_user(private.kafka_bootstrap)
        yield SecureKafka(
            plaintext=f"127.0.0.1:{BASE_PORT}",
            sasl_plaintext=f"127.0.0.1:{BASE_PORT + 2}",
            ssl=f"127.0.0.1:{BASE_PORT + 3}",
            sasl_ssl=f"127.0.0.1:{BASE_PORT + 4}",
            tls=tls,
        )
    finally:
        private.destroy()
