"""Checkpoints as a user sees them: CHECKPOINT waits for one, pg_stat_checkpointer and the
log_checkpoints line report it, recovery starts from it, and the WAL before it goes."""

from __future__ import annotations

import os
import time
import re

import psycopg
import pytest

from crash_util import nodes  # noqa: F401  (fixture)
from wal_format import SEGMENT_DATA, list_segments

pytestmark = pytest.mark.steadydb_only

STAT = ("select num_timed, num_requested, write_time, sync_time, buffers_written, stats_reset "
        "from pg_stat_checkpointer")


def stat(conn) -> dict:
    cur = conn.execute(STAT)
    names = [d.name for d in cur.description]
    return dict(zip(names, cur.fetchone()))


def fill(conn, first: int, rows: int, width: int = 200) -> None:
    for start in range(first, first + rows, 500):
        values = ",".join(f"({i}, '{'x' * width}')" for i in range(start, min(start + 500, first + rows)))
        conn.execute(f"insert into t values {values}")


def fill_wal(conn, rounds: range) -> None:
    """Rows 20,000 to a round, 500 bytes each: about 10 MiB of WAL per round."""
    for round_ in rounds:
        fill(conn, 1 + round_ * 20_000, 20_000, width=500)


@pytest.mark.timeout(120)
def test_checkpoint_is_reported_and_recovery_starts_from_it(nodes):
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table t (id int primary key, v text)")
        fill(conn, 1, 20_000)
        before = stat(conn)
        conn.execute("checkpoint")
        after = stat(conn)
        assert after["num_requested"] == before["num_requested"] + 1, (before, after)
        assert after["num_timed"] == before["num_timed"]
        # 20,000 rows of ~210 bytes: hundreds of pages, all written by this checkpoint.
        assert after["buffers_written"] - before["buffers_written"] >= 300, (before, after)
        assert after["write_time"] >= before["write_time"] and after["sync_time"] >= before["sync_time"]
        assert after["stats_reset"] is not None
        conn.execute("update t set v = 'changed' where id <= 10")
    lines = [line for line in node.log().splitlines() if "checkpoint complete: wrote" in line]
    assert lines, node.log()
    m = re.search(r"wrote (\d+) buffers .* write=[0-9.]+ s, sync=[0-9.]+ s, total=[0-9.]+ s; "
                  r"sync files=\d+, longest=[0-9.]+ s, average=[0-9.]+ s; distance=\d+ kB", lines[-1])
    assert m and int(m.group(1)) >= 300, lines[-1]
    node.kill()
    node.start()
    # Recovery started from the checkpoint and replayed only the update after it.
    assert node.redo_start() > 0, node.log()
    _, records, _ = node.redo_done()
    assert records == 1, node.log()
    with node.connect() as conn:
        assert conn.execute("select count(*) from t").fetchone()[0] == 20_000
        assert conn.execute("select count(*) from t where v = 'changed'").fetchone()[0] == 10
    node.stop_clean()


CHECKPOINT_WAL_FILES = re.compile(r"checkpoint complete: .*?(\d+) WAL file\(s\) added, (\d+) removed, (\d+) recycled")


def spares(datadir) -> list[str]:
    return sorted(n for n in os.listdir(os.path.join(datadir, "wal")) if n.endswith(".spare"))


@pytest.mark.timeout(240)
def test_wal_segments_before_the_checkpoint_are_retired_and_recycled(nodes):
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table t (id int primary key, v text)")
        # About 40 MiB of WAL: the log spans three 16 MiB segments.
        fill_wal(conn, range(4))
        segments = list_segments(node.datadir)
        assert len(segments) >= 3, segments
        conn.execute("checkpoint")
        left = list_segments(node.datadir)
        m = re.findall(r"redo lsn=([0-9A-F]+)/([0-9A-F]+)", node.log())
        redo = (int(m[-1][0], 16) << 32) + int(m[-1][1], 16)
        redo_segment = redo // SEGMENT_DATA
        # Every segment before the redo LSN's is gone; the one after the current segment
        # may already be built ahead of need.
        assert redo_segment >= 2, (redo_segment, segments)
        assert [s for s in left if s <= max(segments)] == [s for s in segments if s >= redo_segment], (
            segments, left, redo_segment)
        assert len(left) <= len([s for s in segments if s >= redo_segment]) + 1, (segments, left)
        # They became spares (the cycle wrote more WAL than they hold): none was removed.
        added, removed, recycled = map(int, CHECKPOINT_WAL_FILES.findall(node.log())[-1])
        assert recycled == redo_segment and removed == 0, (added, removed, recycled)
        assert len(spares(node.datadir)) == recycled, spares(node.datadir)
        # Another 40 MiB: the next segments are built from the spares.
        fill_wal(conn, range(4, 8))
        assert spares(node.datadir) == [], spares(node.datadir)
    # Replay from the checkpoint runs through the recycled segments, whose older records
    # past the end of the log end it quietly.
    node.kill()
    node.start()
    assert "log cut there" not in node.log(), node.log()
    with node.connect() as conn:
        assert conn.execute("select count(*), sum(length(v)) from t").fetchone() == (160_000, 160_000 * 500)
        conn.execute("checkpoint")
        added, removed, recycled = map(int, CHECKPOINT_WAL_FILES.findall(node.log())[-1])
        assert recycled >= 2, (added, removed, recycled)
    node.stop_clean()


@pytest.mark.timeout(60)
def test_a_second_server_on_the_same_data_directory_is_refused(nodes):
    node = nodes().start()
    other = nodes()
    other.datadir = node.datadir
    with pytest.raises(Exception):
        other.start()
    assert "is held by another server" in other.log(), other.log()
    with node.connect() as conn:
        assert conn.execute("select 1").fetchone()[0] == 1
    node.stop_clean()


@pytest.mark.timeout(180)
def test_a_shutdown_does_not_wait_for_a_paced_checkpoint(nodes):
    # A checkpoint started by WAL volume is paced over 0.9 × checkpoint_timeout (54 min
    # here); SIGTERM must finish it at full speed, not on that schedule.
    node = nodes({"max_wal_size": "32MB", "checkpoint_timeout": "1h"}).start()
    with node.connect() as conn:
        conn.execute("create table t (id int primary key, v text)")
        fill(conn, 1, 30_000)
        deadline = time.monotonic() + 60
        first = 100_000
        while "checkpoint starting: wal" not in node.log() and time.monotonic() < deadline:
            fill(conn, first, 500)
            first += 500
        assert "checkpoint starting: wal" in node.log(), node.log()
    assert "checkpoint complete" not in node.log(), node.log()
    assert node.terminate(timeout=30) == 0, node.log()
    assert node.log().count("checkpoint complete") == 2, node.log()


BUFFERS = ("select frames, pages_resident, pages_dirty, reads, evictions, evictions_written, "
           "pages_cleaned, sweep_steps from steadydb_stat_buffers")


def buffers(conn) -> dict:
    cur = conn.execute(BUFFERS)
    names = [d.name for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, rows
    return dict(zip(names, rows[0]))


@pytest.mark.timeout(120)
def test_buffer_view_counts_dirty_pages_and_evictions(nodes):
    # 1MB of buffers (128 frames; few connections, so no more are needed) and a table of
    # several MB: pages must be evicted.
    node = nodes({"shared_buffers": "1MB", "max_connections": "20"}).start()
    with node.connect() as conn:
        start = buffers(conn)
        assert start["frames"] == 128, start
        conn.execute("create table t (id int primary key, v text)")
        fill(conn, 1, 20_000)
        after_fill = buffers(conn)
        assert 0 < after_fill["pages_dirty"] <= after_fill["pages_resident"] <= 128, after_fill
        assert after_fill["evictions"] > 0, after_fill
        assert 0 < after_fill["evictions_written"] <= after_fill["evictions"], after_fill
        # Commits found the pool full of changed pages and wrote some out first.
        assert after_fill["pages_cleaned"] > 0, after_fill
        assert after_fill["sweep_steps"] >= after_fill["evictions"], after_fill

        conn.execute("checkpoint")
        assert buffers(conn)["pages_dirty"] == 0

        # Reading the whole table back brings evicted pages in from the page file.
        assert conn.execute("select count(*) from t").fetchone() == (20_000,)
        read_back = buffers(conn)
        assert read_back["reads"] > after_fill["reads"], (after_fill, read_back)
        assert read_back["pages_dirty"] == 0, read_back
