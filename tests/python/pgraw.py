"""A minimal raw PostgreSQL v3 protocol client for malformed-input tests."""

from __future__ import annotations

import socket
import struct

PROTOCOL_3_0 = 196608  # 3 << 16
SSL_REQUEST_CODE = 80877103
GSSENC_REQUEST_CODE = 80877104
CANCEL_REQUEST_CODE = 80877102

CLOSED = "closed"


def startup_packet(params: dict[str, str], version: int = PROTOCOL_3_0) -> bytes:
    body = struct.pack("!I", version)
    for k, v in params.items():
        body += k.encode() + b"\0" + v.encode() + b"\0"
    body += b"\0"
    return struct.pack("!I", len(body) + 4) + body


def message(kind: bytes, payload: bytes = b"") -> bytes:
    assert len(kind) == 1
    return kind + struct.pack("!I", len(payload) + 4) + payload


def cstr(s: str | bytes) -> bytes:
    if isinstance(s, str):
        s = s.encode()
    return s + b"\0"


def parse_error_fields(payload: bytes) -> dict[str, str]:
    fields = {}
    for part in payload.split(b"\0"):
        if part:
            fields[chr(part[0])] = part[1:].decode("utf-8", "replace")
    return fields


class RawConn:
    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.backend_key: tuple[int, int] | None = None
        self.params: dict[str, str] = {}

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes) -> bool:
        """Send bytes; False if the server already closed the connection."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _fill(self, n: int) -> bool:
        while len(self.buf) < n:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return False
            if not chunk:
                return False
            self.buf += chunk
        return True

    def recv_byte(self) -> bytes | None:
        if not self._fill(1):
            return None
        b, self.buf = self.buf[:1], self.buf[1:]
        return b

    def recv_msg(self):
        """Next backend message as (type, payload), or CLOSED on EOF/reset.

        Raises socket.timeout if the server neither answers nor closes.
        """
        if not self._fill(5):
            return CLOSED
        kind = self.buf[:1]
        (length,) = struct.unpack("!I", self.buf[1:5])
        if length < 4 or length > 64 * 1024 * 1024:
            raise AssertionError(f"server sent a bogus message length {length} for {kind!r}")
        if not self._fill(1 + length):
            return CLOSED
        payload = self.buf[5 : 1 + length]
        self.buf = self.buf[1 + length :]
        return kind, payload

    def read_until_ready(self) -> list:
        """Messages up to and including ReadyForQuery (or up to CLOSED)."""
        msgs = []
        while True:
            m = self.recv_msg()
            msgs.append(m)
            if m == CLOSED or m[0] == b"Z":
                return msgs

    def startup(self, user: str = "postgres", database: str = "postgres", **extra) -> list:
        params = {"user": user, "database": database, "client_encoding": "UTF8", **extra}
        assert self.send(startup_packet(params))
        msgs = self.read_until_ready()
        for m in msgs:
            if m == CLOSED:
                break
            kind, payload = m
            if kind == b"K":
                self.backend_key = struct.unpack("!II", payload[:8])
            elif kind == b"S":
                k, v = payload.split(b"\0")[:2]
                self.params[k.decode()] = v.decode()
            elif kind == b"R":
                (code,) = struct.unpack("!I", payload[:4])
                assert code == 0, f"unexpected authentication request {code} (trust auth expected)"
        return msgs

    def simple_query(self, sql: str | bytes) -> list:
        if isinstance(sql, str):
            sql = sql.encode()
        self.send(message(b"Q", sql + b"\0"))
        return self.read_until_ready()


def errors(msgs) -> list[dict[str, str]]:
    return [parse_error_fields(m[1]) for m in msgs if m != CLOSED and m[0] == b"E"]


def data_rows(msgs) -> list[list[bytes | None]]:
    rows = []
    for m in msgs:
        if m == CLOSED or m[0] != b"D":
            continue
        payload = m[1]
        (n,) = struct.unpack("!H", payload[:2])
        pos = 2
        row = []
        for _ in range(n):
            (ln,) = struct.unpack("!i", payload[pos : pos + 4])
            pos += 4
            if ln < 0:
                row.append(None)
            else:
                row.append(payload[pos : pos + ln])
                pos += ln
        rows.append(row)
    return rows


def ready_status(msgs) -> bytes | None:
    for m in msgs:
        if m != CLOSED and m[0] == b"Z":
            return m[1]
    return None
