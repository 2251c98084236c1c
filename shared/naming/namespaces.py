"""OpenLineage namespaces to locations: ``parse_namespace`` and ``parse_job_namespace``."""

import re
from dataclasses import dataclass
from functools import lru_cache

from shared.naming.families import (
    BARE_FAMILIES,
    CACHE_SIZE,
    CONTAINER_FAMILIES,
    DEFAULT_PORTS,
    FREE_FORM,
    JDBC_PROTOCOLS,
    LOCAL_FILE,
    MAX_NAMESPACE_LEN,
    PATH_SCOPED_FAMILIES,
    STORAGE_FAMILIES,
    UNKNOWN,
    family_of,
)
from shared.naming.hosts import parse_hosts

_SCHEME_RE = re.compile(r"[a-z][a-z0-9+.\-]*")
_WORD_RE = re.compile(r"\w[\w.\-@+:]*")
_AUTHORITY_END_RE = re.compile(r"[/?#;]")
# Bounded fields: the canonical "arn:..." spelling must stay within MAX_NAMESPACE_LEN.
_GLUE_RE = re.compile(
    r"(?:arn:)?(aws[a-z-]{0,16}):glue:([a-z0-9-]{1,32}):([0-9]{1,20})(?:[:/]|\Z)", re.ASCII
)
_TNS_HOST_RE = re.compile(r"\(\s*host\s*=\s*([^)\s]+)", re.IGNORECASE)
_TNS_PORT_RE = re.compile(r"\(\s*port\s*=\s*([^)\s]+)", re.IGNORECASE)
_QUERY_RE = re.compile(r"[?#;]")
_SCOPE_PATH_RE = re.compile(r"(?:/[^\s/]+)*")


@dataclass(frozen=True, slots=True)
class Namespace:
    """One physical system and every address it was reached through."""

    location_type: str
    location_name: str
    addresses: tuple[str, ...]


def parse_namespace(namespace: str) -> Namespace:
    """Normalise a dataset namespace into its location identity; never raises."""
    text = namespace.strip()
    if len(text) > MAX_NAMESPACE_LEN:
        return _unknown(text)
    return _parse_cached(text)


def parse_job_namespace(namespace: str) -> Namespace:
    """Normalise a job namespace with the dataset rule, so both share one location table."""
    # Schedulers mostly use bare words ("default", "airflow-prod"): free-form namespaces.
    # URL-shaped ones ("airflow://host", "http://host:8081") parse like dataset namespaces.
    return parse_namespace(namespace)


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(text: str) -> Namespace:
    return _parse(text) or _unknown(text)


def _unknown(text: str) -> Namespace:
    name = text or UNKNOWN
    return Namespace(UNKNOWN, name, (name,))


def _bare(family: str) -> Namespace:
    return Namespace(family, family, (family,))


def _parse(text: str) -> Namespace | None:
    lowered = text.lower()
    if lowered.startswith("jdbc:"):
        return _parse_jdbc(text[len("jdbc:") :])
    if glue := _GLUE_RE.match(lowered):
        return _parse_glue(glue)
    if lowered == LOCAL_FILE or lowered.startswith("file:"):
        return _parse_file(text[len("file:") :])
    scheme, sep, rest = text.partition("://")
    if sep:
        return _parse_url(scheme.lower(), rest)
    return _parse_word(text)


def _parse_word(text: str) -> Namespace | None:
    family = family_of(text.lower())
    if family in STORAGE_FAMILIES:
        return _bare(family)
    # "unknown" is the address of the unknown location: a free-form one may not take it.
    if text != UNKNOWN and _WORD_RE.fullmatch(text):
        return Namespace(FREE_FORM, text, (text,))
    return None


def _parse_url(scheme: str, rest: str, default_port: int | None = None) -> Namespace | None:
    # "jdbc://..." would not parse back as a URL ("jdbc:" is a prefix), so it cannot be one.
    if not _SCHEME_RE.fullmatch(scheme) or scheme == "jdbc":
        return None
    family = family_of(scheme)
    if family in BARE_FAMILIES:
        return _bare(family)
    if family == LOCAL_FILE:
        return _parse_file("//" + rest)
    end = _AUTHORITY_END_RE.search(rest)
    authority, path = (rest[: end.start()], rest[end.start() :]) if end else (rest, "")
    if family not in CONTAINER_FAMILIES:
        authority = authority.rpartition("@")[2]  # credentials never identify a location
    hosts = parse_hosts(authority, default_port or DEFAULT_PORTS.get(family))
    if hosts and family in PATH_SCOPED_FAMILIES:
        hosts = _scoped(hosts, path)
    return _build(family, hosts) if hosts else None


def _scoped(hosts: list[str], path: str) -> list[str] | None:
    """``host/dbs/db`` for namespaces whose path is part of the location's identity."""
    scope = _QUERY_RE.split(path, maxsplit=1)[0].rstrip("/")
    if not (scope.isprintable() and _SCOPE_PATH_RE.fullmatch(scope)):
        return None
    return [host + scope for host in hosts]


def _build(family: str, hosts: list[str]) -> Namespace | None:
    addresses = tuple(sorted({f"{family}://{host}" for host in hosts}))
    if max(map(len, addresses)) > MAX_NAMESPACE_LEN:
        return None  # parsing an address must give it back, and long input is not parsed
    # Deterministic whichever address an event used first: consumers race on new locations.
    return Namespace(family, addresses[0].partition("://")[2], addresses)


def _parse_file(rest: str) -> Namespace | None:
    """``file``, ``file:/path``, ``file:///path`` are local files; ``file://host`` is remote."""
    if not rest.startswith("//"):
        return _bare(LOCAL_FILE)
    end = _AUTHORITY_END_RE.search(rest, 2)
    authority = rest[2 : end.start() if end else len(rest)].rpartition("@")[2]
    hosts = parse_hosts(authority, None)
    if hosts is None:
        return None
    # RFC 8089: an empty host and "localhost" both mean "this machine".
    remote = [host for host in hosts if host.partition(":")[0] != "localhost"]
    return _build(LOCAL_FILE, remote) if remote else _bare(LOCAL_FILE)


def _parse_glue(match: re.Match[str]) -> Namespace:
    partition, region, account = match.groups()
    name = f"{region}:{account}"
    return Namespace("glue", name, (f"arn:{partition}:glue:{name}",))


def _parse_jdbc(rest: str) -> Namespace | None:
    """``jdbc:<sub-protocol>[:<sub-protocol>]://authority/...``; oracle has its own syntax."""
    if rest.lower().startswith("oracle:"):
        return _parse_oracle(rest)
    protocols, sep, tail = rest.partition("://")
    if not sep or not protocols:
        return None
    # "mysql:loadbalance", "jtds:sqlserver": the first sub-protocol we know names the family.
    names = protocols.lower().split(":")
    known = [JDBC_PROTOCOLS[name] for name in names if name in JDBC_PROTOCOLS]
    family, port = known[0] if known else (names[0], None)
    return _parse_url(family, tail, port)


def _parse_oracle(rest: str) -> Namespace | None:
    """``oracle:thin:[user/pass]@host:port:SID``, ``@//host:port/service`` or a descriptor."""
    _, at, target = rest.rpartition("@")
    target = target.strip().removeprefix("//")
    if not at:
        return None
    if target.startswith("("):
        return _parse_tns(target)
    end = _AUTHORITY_END_RE.search(target)
    host, _, port_and_sid = target[: end.start() if end else len(target)].partition(":")
    port = port_and_sid.partition(":")[0]
    return _parse_url("oracle", f"{host}:{port}" if port else host)


def _parse_tns(descriptor: str) -> Namespace | None:
    """Every (HOST=..)(PORT=..) pair of an Oracle connect descriptor is one address."""
    hosts = _TNS_HOST_RE.findall(descriptor)
    ports = _TNS_PORT_RE.findall(descriptor)
    if len(ports) != len(hosts):
        ports = [""] * len(hosts)  # unpaired: fall back to the default port for each host
    entries = [
        (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
        for host, port in zip(hosts, ports, strict=True)
    ]
    return _parse_url("oracle", ",".join(entries)) if entries else None
