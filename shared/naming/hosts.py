"""Authorities (``host[:port][,host[:port]...]``) to canonical ``host:port`` strings."""

import ipaddress
import re

_HOST_RE = re.compile(r"[^\s/?#\[\]@,:]+(?:@[^\s/?#\[\]@,:]+)?")
_MAX_PORT = 65535
_BAD_PORT = -1


def parse_hosts(authority: str, default_port: int | None) -> list[str] | None:
    """Every ``host[:port]`` of a comma-separated authority, canonical; None if one is bad."""
    hosts = []
    for entry in authority.split(","):
        if not entry.strip():
            continue  # "kafka://a:9092,,b:9092" lists two brokers, not three
        host = _parse_host_port(entry.strip(), default_port)
        if host is None:
            return None
        hosts.append(host)
    return hosts


def _parse_host_port(entry: str, default_port: int | None) -> str | None:
    bracketed = entry.startswith("[")
    if bracketed:
        raw_host, bracket, after = entry[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            return None
        port_text = after[1:]
    elif entry.count(":") > 1:
        raw_host, port_text = entry, ""  # an unbracketed IPv6 literal cannot carry a port
    else:
        raw_host, _, port_text = entry.partition(":")
    host = _canonical_host(raw_host, ip_only=bracketed)
    port = _parse_port(port_text, default_port)
    if host is None or port == _BAD_PORT:
        return None
    return host if port is None else f"{host}:{port}"


def _parse_port(text: str, default_port: int | None) -> int | None:
    """The port as a number, the default when absent, or _BAD_PORT when not a TCP port."""
    if not text:
        return default_port
    # isascii: int() also takes other scripts' digits; the length check keeps a 100k-digit
    # "port" away from int()'s digit limit, which raises.
    if len(text) <= len(str(_MAX_PORT)) and text.isascii() and text.isdigit():
        port = int(text)
        return port if 0 < port <= _MAX_PORT else _BAD_PORT
    return _BAD_PORT


def _canonical_host(raw: str, *, ip_only: bool) -> str | None:
    host = raw.lower().rstrip(".")  # "db.example.com." is the fully qualified "db.example.com"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if ip_only or not host.isprintable() or not _HOST_RE.fullmatch(host):
            return None
        return host
    # One machine reached as localhost by one job and as 127.0.0.1 or ::1 by another must be
    # one location. A loopback address only ever reaches the producer's own machine, whatever
    # its spelling, so folding every spelling into "localhost" loses nothing the namespace
    # could have told us (and "localhost" on two machines was ambiguous already).
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    if address.is_loopback or (mapped is not None and mapped.is_loopback):
        return "localhost"
    return f"[{address.compressed}]" if address.version == 6 else address.compressed
