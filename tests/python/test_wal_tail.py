"""Recovery of a damaged log tail: torn, corrupt, or followed by garbage.

The log is read and modified here in Python (``wal_format``), independently of the
server: each test writes N commits in N autocommit transactions (one WAL record each),
kills the server (a clean stop would take a shutdown checkpoint, and recovery would then
not read the records before it), damages the log at an exact record, and checks that recovery
keeps every record before the damage, cuts the log exactly there (with a WARNING
``invalid record at X/Y``), and then logs new commits that survive a restart.
"""

from __future__ import annotations

import os
import random
import re

import pytest

from crash_util import env_int, nodes, seed_from_env  # noqa: F401  (nodes is a fixture)
from wal_format import (
    KIND_COMMIT,
    KIND_CREATE_TABLE,
    RECORD_HEADER,
    SEGMENT_BYTES,
    SEGMENT_DATA,
    Log,
    file_position,
    list_segments,
    lsn_text,
    segment_path,
)

pytestmark = pytest.mark.steadydb_only

N = env_int("STEADYDB_WAL_TAIL_ROWS", 40)


def write_rows(node, first: int, last: int) -> None:
    with node.connect() as conn:  # autocommit: one commit record per row
        for i in range(first, last + 1):
            conn.execute("insert into t (id, v) values (%s, %s)", (i, f"row {i} " + "v" * (i % 50)))


def ids(node) -> list[int]:
    with node.connect() as conn:
        return [r[0] for r in conn.execute("select id from t order by id").fetchall()]


def invalid_record_lines(node) -> list[str]:
    return [line for line in node.log().splitlines() if "invalid record at" in line]


def setup_log(nodes):
    """A server killed after CREATE TABLE and N acknowledged single-row commits; returns
    (node, log, records) where the last N records are the commits of rows 1..N."""
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table t (id int primary key, v text)")
    write_rows(node, 1, N)
    node.kill()
    log = Log(node.datadir)
    # (the next segment may already be built ahead of need)
    assert log.check_segment_headers() in ([0], [0, 1])
    records, end, why = log.walk()
    assert why == "end", f"the log of acknowledged commits ends with {why} at {end}"
    kinds = [r.kind for r in records]
    assert kinds[0] == KIND_CREATE_TABLE, kinds
    # The CREATE TABLE's own transaction commits too (confirming the creation), then one
    # commit per row.
    assert kinds[1] == KIND_COMMIT, kinds
    assert kinds.count(KIND_COMMIT) == N + 1, kinds
    assert kinds[-N:] == [KIND_COMMIT] * N, kinds
    assert log.all_zero_from(end), "bytes after the end of the log are not zero"
    return node, log, records


def check_recovered(node, log: Log, records, cut_index: int, *, warned: bool = True) -> None:
    """After a restart: exactly the records before ``records[cut_index]`` were replayed and
    the log was cut at that record's position."""
    cut_pos = records[cut_index].pos if cut_index < len(records) else records[-1].end
    end, replayed, nbytes = node.redo_done()
    assert (end, replayed, nbytes) == (lsn_text(cut_pos), cut_index, cut_pos), node.log()
    lines = invalid_record_lines(node)
    if warned:
        assert lines, f"no 'invalid record at' line in the server log:\n{node.log()}"
        assert any(f"invalid record at {lsn_text(cut_pos)} " in line and "WARN" in line for line in lines), (
            f"expected a WARNING 'invalid record at {lsn_text(cut_pos)}':\n{node.log()}"
        )
    else:
        assert not lines, node.log()


def check_log_cut(log: Log, cut_pos: int) -> None:
    """On disk (server stopped): the log ends at ``cut_pos`` and nothing is left after it."""
    records, end, why = log.walk()
    assert (end, why) == (cut_pos, "end"), f"log ends at {end} ({why}), expected a clean end at {cut_pos}"
    assert log.all_zero_from(cut_pos), "the rest of the segment after the cut is not zero"
    seg, _ = file_position(cut_pos)
    assert list_segments(log.datadir) == list(range(seg + 1)), list_segments(log.datadir)


def check_new_commits_survive(node, log: Log, have: int) -> None:
    """The server accepts new commits after the cut, and they survive a restart."""
    write_rows(node, have + 1, N)
    assert ids(node) == list(range(1, N + 1))
    node.kill()
    node.start()
    assert not invalid_record_lines(node), node.log()
    assert ids(node) == list(range(1, N + 1))
    node.kill()
    records, end, why = log.walk()
    assert why == "end"
    assert [r.kind for r in records].count(KIND_COMMIT) == N + 1  # with the CREATE TABLE's commit


def damage_zero_tail(log: Log, rec) -> None:
    """A torn write: the second half of the last record never reached the disk."""
    log.zero_to_segment_end(rec.pos + rec.length // 2)


def damage_truncate_file(log: Log, rec) -> None:
    """A torn write at the end of the file: the segment file ends inside the last record."""
    log.truncate_file_at(rec.pos + rec.length // 2)


def damage_flip_payload(log: Log, rec) -> None:
    """One bit flipped inside the payload: the CRC no longer matches."""
    at = rec.pos + RECORD_HEADER + (rec.length - RECORD_HEADER) // 2
    b = log.read(at, 1)[0]
    log.write(at, bytes([b ^ 0x01]))


def damage_bad_lsn(log: Log, rec) -> None:
    """Stale bytes of another incarnation: a record whose LSN field is not its position."""
    log.write(rec.pos + 8, (rec.pos + 4096).to_bytes(8, "little"))


def damage_bad_length(log: Log, rec) -> None:
    """A length field too short to hold a record header."""
    log.write(rec.pos, (RECORD_HEADER - 1).to_bytes(4, "little"))


DAMAGE = {
    "zero_tail": damage_zero_tail,
    "truncate_file": damage_truncate_file,
    "flip_payload": damage_flip_payload,
    "bad_lsn": damage_bad_lsn,
    "bad_length": damage_bad_length,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.timeout(90)
def test_damaged_last_record_is_cut(nodes, damage):
    node, log, records = setup_log(nodes)
    last = len(records) - 1
    DAMAGE[damage](log, records[last])
    node.start()
    # Exactly the last commit (row N) is gone; every earlier one is kept.
    assert ids(node) == list(range(1, N))
    check_recovered(node, log, records, last)
    node.kill()
    check_log_cut(log, records[last].pos)
    node.start()
    assert not invalid_record_lines(node), "the cut log was found damaged again:\n" + node.log()
    assert ids(node) == list(range(1, N))
    check_new_commits_survive(node, log, N - 1)


@pytest.mark.timeout(90)
def test_corrupt_record_in_the_middle_refuses_to_start(nodes):
    """A damaged record followed by valid ones that were appended after it was durable is
    corruption, not a torn tail: the server refuses to start and names the record's
    position and segment. With recovery_cut_corrupt_wal = on it starts, cutting the log
    there (the commits after it are lost, as the option says), and reports the cut."""
    node, log, records = setup_log(nodes)
    k = N // 2  # the commit of row k is the k-th of the last N records
    index = len(records) - N + (k - 1)
    bad = records[index].pos
    damage_flip_payload(log, records[index])
    with pytest.raises(AssertionError, match="exited with code"):
        node.start()
    assert f"WAL is corrupt: invalid record at {lsn_text(bad)}" in node.log(), node.log()
    seg, _ = file_position(bad)
    assert os.path.basename(segment_path(node.datadir, seg)) in node.log(), node.log()
    # Still refused on the next try: nothing was cut.
    with pytest.raises(AssertionError, match="exited with code"):
        node.start()
    node.start(settings={"recovery_cut_corrupt_wal": "on"})
    assert ids(node) == list(range(1, k))
    check_recovered(node, log, records, index)
    assert any("corrupt" in line for line in invalid_record_lines(node)), node.log()
    node.kill()
    check_log_cut(log, bad)
    node.start()
    check_new_commits_survive(node, log, k - 1)


@pytest.mark.timeout(90)
def test_garbage_after_the_end_is_cut_without_loss(nodes):
    seed = seed_from_env()
    rng = random.Random(seed)
    node, log, records = setup_log(nodes)
    end = records[-1].end
    garbage = bytes([rng.randrange(1, 256)]) + rng.randbytes(rng.randrange(64, 4096))
    log.write(end, garbage)
    node.start()
    assert ids(node) == list(range(1, N + 1))
    check_recovered(node, log, records, len(records))
    node.kill()
    check_log_cut(log, end)
    node.start()
    assert not invalid_record_lines(node), node.log()
    assert ids(node) == list(range(1, N + 1))
    # More commits after the cut, on top of the kept ones.
    with node.connect() as conn:
        conn.execute("insert into t (id, v) values (%s, 'after')", (N + 1,))
    node.kill()
    node.start()
    assert not invalid_record_lines(node), node.log()
    assert ids(node) == list(range(1, N + 2))
    node.kill()


@pytest.mark.parametrize("damage", ["remove_next_segment", "zero_next_segment"])
@pytest.mark.timeout(180)
def test_torn_record_across_a_segment_boundary(nodes, damage):
    """A COPY transaction whose record starts in segment 0 and ends in segment 1; the part
    in segment 1 is lost. The whole transaction is cut, segment 1 is removed."""
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table t (id int primary key, v text)")
    write_rows(node, 1, N)
    pad = "p" * 1000
    big_rows = (SEGMENT_DATA // 1000) + 2000  # enough to reach well into segment 1
    with node.connect(autocommit=False) as conn:
        with conn.cursor() as cur:
            with cur.copy("copy t (id, v) from stdin") as cp:
                for lo in range(0, big_rows, 5000):
                    cp.write("".join(f"{1000 + i}\t{pad}\n" for i in range(lo, min(lo + 5000, big_rows))))
        conn.commit()
    node.kill()
    log = Log(node.datadir)
    assert log.check_segment_headers() in ([0, 1], [0, 1, 2])
    records, end, why = log.walk()
    assert why == "end"
    big = records[-1]
    assert big.kind == KIND_COMMIT
    assert file_position(big.pos)[0] == 0 and file_position(big.end - 1)[0] == 1, (big.pos, big.end)
    if damage == "remove_next_segment":
        os.remove(segment_path(node.datadir, 1))
    else:
        with open(segment_path(node.datadir, 1), "r+b") as f:
            f.seek(32)
            f.write(bytes(SEGMENT_BYTES - 32))
    node.start()
    with node.connect() as conn:
        assert conn.execute("select count(*), max(id) from t").fetchone() == (N, N)
    check_recovered(node, log, records, len(records) - 1)
    assert not os.path.exists(segment_path(node.datadir, 1)), "segment 1 was not removed by the cut"
    node.kill()
    check_log_cut(log, big.pos)
    node.start()
    assert not invalid_record_lines(node), node.log()
    with node.connect() as conn:
        conn.execute("insert into t (id, v) values (%s, 'after')", (N + 1,))
    node.kill()
    node.start()
    assert ids(node) == list(range(1, N + 2))
    node.kill()


def test_wal_format_reader_matches_server(nodes):
    """The Python reader agrees with the server's own replay on an undamaged log."""
    node, log, records = setup_log(nodes)
    node.start()
    end, replayed, nbytes = node.redo_done()
    assert (end, replayed, nbytes) == (lsn_text(records[-1].end), len(records), records[-1].end)
    assert not invalid_record_lines(node)
    assert re.search(r"redo done at \S+: \d+ records", node.log())
    node.kill()
