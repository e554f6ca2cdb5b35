"""A minimal PostgreSQL v3 protocol client (simple query protocol, trust auth only).

Used for control statements (DDL, SHOW, CHECKPOINT, pg_stat_wal) so that timing a
statement does not include starting a psql process and opening a connection.
"""

from __future__ import annotations

import socket
import struct
import time

PROTOCOL_3_0 = 196608


class PgError(Exception):
    """An ErrorResponse from the server (or a protocol/connection problem)."""

    def __init__(self, message: str, fields: dict[str, str] | None = None):
        super().__init__(message)
        self.fields = fields or {}

    @property
    def sqlstate(self) -> str | None:
        return self.fields.get("C")


def _error_fields(payload: bytes) -> dict[str, str]:
    fields = {}
    for part in payload.split(b"\0"):
        if part:
            fields[chr(part[0])] = part[1:].decode("utf-8", "replace")
    return fields


class Result:
    def __init__(self, columns: list[str], rows: list[list[str | None]], tag: str):
        self.columns = columns
        self.rows = rows
        self.tag = tag

    def dicts(self) -> list[dict[str, str | None]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def scalar(self) -> str | None:
        return self.rows[0][0] if self.rows and self.rows[0] else None


class Connection:
    def __init__(self, host: str, port: int, user: str = "postgres", database: str = "postgres",
                 timeout: float | None = 10.0, application_name: str = "steadydb-bench"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""
        self.params: dict[str, str] = {}
        body = struct.pack("!I", PROTOCOL_3_0)
        for k, v in (("user", user), ("database", database), ("application_name", application_name)):
            body += k.encode() + b"\0" + v.encode() + b"\0"
        body += b"\0"
        self.sock.sendall(struct.pack("!I", len(body) + 4) + body)
        while True:
            kind, payload = self._read_message()
            if kind == b"R":
                (code,) = struct.unpack("!I", payload[:4])
                if code != 0:
                    self.close()
                    raise PgError(f"server asked for authentication (method {code}); only trust auth is supported")
            elif kind == b"S":
                k, v = payload.rstrip(b"\0").split(b"\0", 1)
                self.params[k.decode()] = v.decode("utf-8", "replace")
            elif kind == b"E":
                fields = _error_fields(payload)
                self.close()
                raise PgError(fields.get("M", "connection refused"), fields)
            elif kind == b"Z":
                break
            # K (backend key), N (notice): ignored

    def settimeout(self, timeout: float | None) -> None:
        self.sock.settimeout(timeout)

    def close(self) -> None:
        try:
            self.sock.sendall(b"X" + struct.pack("!I", 4))
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _recv_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise PgError("connection closed by server")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _read_message(self) -> tuple[bytes, bytes]:
        head = self._recv_exact(5)
        kind = head[:1]
        (length,) = struct.unpack("!I", head[1:])
        return kind, self._recv_exact(length - 4)

    def query(self, sql: str) -> Result:
        """Run one statement with the simple query protocol; raise PgError on an error."""
        payload = sql.encode() + b"\0"
        self.sock.sendall(b"Q" + struct.pack("!I", len(payload) + 4) + payload)
        columns: list[str] = []
        rows: list[list[str | None]] = []
        tag = ""
        error = None
        while True:
            kind, payload = self._read_message()
            if kind == b"T":
                (n,) = struct.unpack("!H", payload[:2])
                pos = 2
                columns = []
                for _ in range(n):
                    end = payload.index(b"\0", pos)
                    columns.append(payload[pos:end].decode())
                    pos = end + 1 + 18
            elif kind == b"D":
                (n,) = struct.unpack("!H", payload[:2])
                pos = 2
                row: list[str | None] = []
                for _ in range(n):
                    (ln,) = struct.unpack("!i", payload[pos:pos + 4])
                    pos += 4
                    if ln < 0:
                        row.append(None)
                    else:
                        row.append(payload[pos:pos + ln].decode("utf-8", "replace"))
                        pos += ln
                rows.append(row)
            elif kind == b"C":
                tag = payload.rstrip(b"\0").decode()
            elif kind == b"E":
                error = _error_fields(payload)
            elif kind == b"Z":
                break
            elif kind in (b"G", b"H"):
                raise PgError("COPY is not supported by this client")
            # N (notice), S (parameter status), I (empty query): ignored
        if error is not None:
            raise PgError(f"{error.get('S', 'ERROR')}:  {error.get('M', '')}", error)
        return Result(columns, rows, tag)


def wait_until_ready(port: int, timeout: float, alive=lambda: True) -> None:
    """Poll until `select 1` succeeds on 127.0.0.1:port, or raise TimeoutError/RuntimeError."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("server process exited during startup")
        try:
            with Connection("127.0.0.1", port, timeout=5) as c:
                c.query("select 1")
                return
        except (OSError, PgError) as e:  # not up yet, or still starting ("the database system is starting up")
            last = e
        time.sleep(0.1)
    raise TimeoutError(f"server on port {port} not ready after {timeout:.0f} s (last error: {last})")
