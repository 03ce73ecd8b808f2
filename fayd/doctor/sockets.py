"""Who listens where, from /proc/net/tcp and tcp6 (Linux): a port's listening addresses,
and whether they reach only this box or the LAN."""

from __future__ import annotations

import ipaddress
import socket
import struct
from pathlib import Path

LISTEN = "0A"


def _address(hex_ip: str) -> str:
    """/proc's address: IPv4 as one little-endian word, IPv6 as four of them."""
    raw = bytes.fromhex(hex_ip)
    words = struct.unpack(f"<{len(raw) // 4}I", raw)
    packed = struct.pack(f">{len(words)}I", *words)
    ip = ipaddress.ip_address(packed)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ip)


def listening(port: int, root: Path = Path("/proc/net")) -> list[str]:
    """The addresses a TCP socket listens on at ``port`` (empty: none, or no /proc)."""
    found: list[str] = []
    for table in ("tcp", "tcp6"):
        try:
            lines = (root / table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            hex_ip, hex_port = fields[1].rsplit(":", 1)
            if fields[3] == LISTEN and int(hex_port, 16) == port:
                found.append(_address(hex_ip))
    return sorted(set(found))


def is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


def exposure(addresses: list[str]) -> str:
    """In words: where from the port can be reached."""
    if all(is_loopback(a) for a in addresses):
        return "this box only (loopback)"
    if any(a in ("0.0.0.0", "::") for a in addresses):
        return "the LAN (every interface)"
    return "the LAN (" + ", ".join(a for a in addresses if not is_loopback(a)) + ")"


def reachable(host: str, port: int, timeout_s: float = 3.0) -> str:
    """'' when a TCP connection to host:port opens, else why not."""
    try:
        socket.create_connection((host, port), timeout_s).close()
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""
