"""Broker addresses as the client handles them: `host:port` strings (IPv6 hosts in
brackets), the advertised -> reachable map used outside the containers, and a registered
endpoint's address. Pure functions."""

from __future__ import annotations

import re

from domain import EndPoint

_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")


def parse_address(text: str) -> str:
    """Validate a `host:port` string (IPv6 hosts in brackets) and return it stripped."""
    address = text.strip()
    match = _ADDRESS.fullmatch(address)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise ValueError(f"expected host:port with a port in 1..65535, got {text!r}")
    return address


def parse_addresses(text: str) -> list[str]:
    """Parse `host:port,host:port,...` (at least one)."""
    out = [parse_address(a) for a in text.split(",") if a.strip()]
    if not out:
        raise ValueError("at least one host:port is needed")
    return out


def parse_address_map(text: str) -> dict[str, str]:
    """Parse `advertised=reachable,...` (each side `host:port`) into a dict."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        advertised, sep, reachable = item.partition("=")
        if not sep:
            raise ValueError(f"expected ADVERTISED=REACHABLE, got {item!r}")
        out[parse_address(advertised)] = parse_address(reachable)
    return out


def endpoint_address(endpoint: EndPoint) -> str:
    """`host:port` of an endpoint, IPv6 hosts in brackets."""
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"{host}:{endpoint.port}"
