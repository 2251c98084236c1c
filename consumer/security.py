"""Kafka SASL/TLS settings -> FastStream security objects."""

import ssl

from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512

from consumer.settings import KafkaSettings

SCRAM = {"SCRAM-SHA-256": SASLScram256, "SCRAM-SHA-512": SASLScram512}


def ssl_context(settings: KafkaSettings) -> ssl.SSLContext | None:
    if not settings.security_protocol.endswith("SSL"):
        return None
    context = ssl.create_default_context(cafile=settings.ssl_cafile)
    if settings.ssl_certfile:
        context.load_cert_chain(settings.ssl_certfile, settings.ssl_keyfile)
    return context


def kafka_security(settings: KafkaSettings) -> BaseSecurity | None:
    """PLAINTEXT -> None; SSL -> TLS only; SASL_* -> PLAIN or SCRAM, over TLS for SASL_SSL."""
    context = ssl_context(settings)
    if not settings.security_protocol.startswith("SASL"):
        return BaseSecurity(ssl_context=context) if context else None
    if not settings.sasl_username or settings.sasl_password is None:
        raise ValueError("SASL needs THREADLINE__KAFKA__SASL_USERNAME and __SASL_PASSWORD")
    password = settings.sasl_password.get_secret_value()
    use_ssl = context is not None
    if settings.sasl_mechanism == "PLAIN":
        return SASLPlaintext(settings.sasl_username, password, ssl_context=context, use_ssl=use_ssl)
    kind = SCRAM[settings.sasl_mechanism]
    return kind(settings.sasl_username, password, ssl_context=context, use_ssl=use_ssl)
