"""Reading SteadyDB's write-ahead log from Python, independently of the server.

Layout (see ``src/wal``): the log is a sequence of bytes split over segment files
``<datadir>/wal/NNNNNNNNNNNNNNNN`` (16-digit hex segment number) of 16 MiB each. A segment
starts with a 32-byte header (magic ``SDBWAL01``, segment number, segment size, reserved,
CRC32C of the first 28 bytes); log position ``p`` lives in segment ``p // SEGMENT_DATA``
at file offset ``32 + p % SEGMENT_DATA``. A segment is built zero-filled, or from a retired
segment (a ``.spare``) whose first block is rewritten and whose older records stay behind it.

A record, little-endian::

    u32 total length (header included) | u32 CRC32C of bytes 8..length |
    u64 LSN (the record's own start position) | u8 kind | payload

The end of the log is the first zero length field, or the first record header whose LSN is
the position less a whole number of segments (written there before the segment was recycled).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

SEGMENT_BYTES = 16 * 1024 * 1024
SEGMENT_HEADER = 32
SEGMENT_DATA = SEGMENT_BYTES - SEGMENT_HEADER
RECORD_HEADER = 25
MAGIC = b"SDBWAL01"

KIND_COMMIT = 1
KIND_CREATE_TABLE = 2
KIND_DROP_TABLE = 3
KIND_SET_PRIMARY_KEY = 4
KIND_SEQUENCE_ADVANCE = 5
KIND_WRITE_SET_PIECE = 6
KINDS = {
    KIND_COMMIT,
    KIND_CREATE_TABLE,
    KIND_DROP_TABLE,
    KIND_SET_PRIMARY_KEY,
    KIND_SEQUENCE_ADVANCE,
    KIND_WRITE_SET_PIECE,
}


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as used by the WAL. Pure Python: fine for small records."""
    crc = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


def segment_name(n: int) -> str:
    return f"{n:016X}"


def segment_path(datadir: str | os.PathLike, n: int) -> Path:
    return Path(datadir) / "wal" / segment_name(n)


def file_position(pos: int) -> tuple[int, int]:
    """(segment number, file offset) of log position ``pos``."""
    return pos // SEGMENT_DATA, SEGMENT_HEADER + pos % SEGMENT_DATA


def lsn_text(pos: int) -> str:
    """PostgreSQL's X/Y notation, as the server prints LSNs."""
    return f"{pos >> 32:X}/{pos & 0xFFFFFFFF:X}"


def list_segments(datadir: str | os.PathLike) -> list[int]:
    out = []
    for name in os.listdir(Path(datadir) / "wal"):
        try:
            out.append(int(name, 16))
        except ValueError:
            pass
    return sorted(out)


@dataclass
class Record:
    pos: int  # start position in the log
    length: int
    kind: int
    crc: int

    @property
    def end(self) -> int:
        return self.pos + self.length


class Log:
    """Random access to the log bytes of one data directory (read and modify)."""

    def __init__(self, datadir: str | os.PathLike):
        self.datadir = Path(datadir)

    def read(self, pos: int, n: int) -> bytes:
        """Up to ``n`` log bytes at ``pos`` (fewer where segment files end or are missing)."""
        out = bytearray()
        while n > 0:
            seg, off = file_position(pos)
            path = segment_path(self.datadir, seg)
            if not path.exists():
                break
            want = min(n, SEGMENT_DATA - (off - SEGMENT_HEADER))
            with open(path, "rb") as f:
                f.seek(off)
                got = f.read(want)
            out += got
            if len(got) < want:
                break
            pos += want
            n -= want
        return bytes(out)

    def write(self, pos: int, data: bytes) -> None:
        """Overwrite log bytes at ``pos`` (the segment files must exist)."""
        while data:
            seg, off = file_position(pos)
            want = min(len(data), SEGMENT_DATA - (off - SEGMENT_HEADER))
            with open(segment_path(self.datadir, seg), "r+b") as f:
                f.seek(off)
                f.write(data[:want])
                f.flush()
                os.fsync(f.fileno())
            data = data[want:]
            pos += want

    def zero_to_segment_end(self, pos: int) -> None:
        """Zero the log from ``pos`` to the end of its segment (the file keeps its size)."""
        seg, off = file_position(pos)
        path = segment_path(self.datadir, seg)
        with open(path, "r+b") as f:
            f.seek(off)
            f.write(bytes(SEGMENT_BYTES - off))
            f.flush()
            os.fsync(f.fileno())

    def truncate_file_at(self, pos: int) -> None:
        """Cut the segment file holding ``pos`` at that position (the file gets shorter)."""
        seg, off = file_position(pos)
        os.truncate(segment_path(self.datadir, seg), off)

    def check_segment_headers(self) -> list[int]:
        segs = list_segments(self.datadir)
        assert segs == list(range(len(segs))), f"segment numbers are not contiguous: {segs}"
        for n in segs:
            with open(segment_path(self.datadir, n), "rb") as f:
                h = f.read(SEGMENT_HEADER)
            assert h[:8] == MAGIC, f"segment {n}: bad magic {h[:8]!r}"
            seg_no, size = struct.unpack_from("<QQ", h, 8)
            assert (seg_no, size) == (n, SEGMENT_BYTES), f"segment {n}: header says {seg_no}, {size}"
            assert struct.unpack_from("<I", h, 28)[0] == crc32c(h[:28]), f"segment {n}: bad header CRC"
        return segs

    def walk(self, verify_crc_up_to: int = 1 << 20) -> tuple[list[Record], int, str]:
        """Walk the log from position 0 as recovery does.

        Returns the valid records, the end position (where the first invalid or zero
        length record starts) and why the walk stopped (``"end"`` for a zero length).
        CRCs are verified for records up to ``verify_crc_up_to`` bytes (pure Python CRC is slow).
        """
        records: list[Record] = []
        pos = 0
        while True:
            header = self.read(pos, 16)
            if len(header) < 16:
                return records, pos, "end" if not any(header) else "truncated header"
            length, crc, lsn = struct.unpack("<IIQ", header)
            if length == 0:
                return records, pos, "end"
            if length < RECORD_HEADER or length > (1 << 30):
                return records, pos, f"bad length {length}"
            if lsn < pos and (pos - lsn) % SEGMENT_DATA == 0:
                return records, pos, "end"
            if lsn != pos:
                return records, pos, f"bad lsn {lsn}"
            if length <= verify_crc_up_to:
                body = self.read(pos, length)
                if len(body) < length:
                    return records, pos, "truncated"
                if crc32c(body[8:]) != crc:
                    return records, pos, "bad crc"
                kind = body[24]
            else:
                tail = self.read(pos + length - 1, 1)
                if len(tail) < 1:
                    return records, pos, "truncated"
                kind = self.read(pos + 24, 1)[0]
            if kind not in KINDS:
                return records, pos, f"bad kind {kind}"
            records.append(Record(pos, length, kind, crc))
            pos += length

    def all_zero_from(self, pos: int) -> bool:
        """Whether every byte from ``pos`` to the end of its segment file is zero."""
        seg, off = file_position(pos)
        with open(segment_path(self.datadir, seg), "rb") as f:
            f.seek(off)
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return True
                if chunk.count(0) != len(chunk):
                    return False
