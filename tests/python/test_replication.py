"""Streaming replication: base backups, standbys that stream and serve reads, synchronous
commit at every level, what happens when the standbys are gone, and pg_receivewal."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from conftest import _resolve_bin
from crash_util import nodes  # noqa: F401  (fixture)

pytestmark = pytest.mark.steadydb_only


def basebackup(primary, standby, name: str) -> None:
    """Make `standby`'s data directory a standby of `primary`, streaming through slot `name`."""
    r = subprocess.run(
        [str(_resolve_bin()), "basebackup", "-h", "127.0.0.1", "-p", str(primary.port),
         "-D", standby.datadir, "-S", name, "--application-name", name],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert (Path(standby.datadir) / "standby.signal").exists()


def set_conf(node, **values: str) -> None:
    """Set values in the node's steadydb.conf and reload it."""
    path = Path(node.datadir) / "steadydb.conf"
    lines = [line for line in path.read_text().splitlines()
             if line.split("=")[0].strip() not in values]
    lines += [f"{k} = '{v}'" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    with node.connect() as c:
        assert c.execute("select pg_reload_conf()").fetchone() == (True,)


def values(table: str, keys, text: str) -> str:
    """An INSERT of one row per key."""
    return f"insert into {table} values " + ", ".join(f"({k}, '{text}')" for k in keys)


def wait_for(pred, timeout: float = 30, what: str = "condition") -> None:
    """Poll `pred` until it holds; a table it reads that a standby has not replayed yet
    is not there yet, not a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except psycopg.errors.UndefinedTable:
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def table_exists(node, table: str) -> bool:
    with node.connect() as c:
        try:
            c.execute(f"select 1 from {table} limit 1")
            return True
        except psycopg.errors.UndefinedTable:
            return False


def count(node, table: str = "t") -> int:
    with node.connect() as c:
        return c.execute(f"select count(*) from {table}").fetchone()[0]


def pair(nodes, names=("s1",)):
    """A primary and standbys made from it, all started."""
    primary = nodes()
    primary.fixed_port = None
    primary.start()
    primary.fixed_port = primary.port
    with primary.connect() as c:
        c.execute("create table t (k int primary key, v text)")
        c.execute(values("t", range(1, 101), "v"))
    standbys = []
    for name in names:
        s = nodes()
        basebackup(primary, s, name)
        s.start()
        s.fixed_port = s.port
        standbys.append(s)
    return primary, standbys


@pytest.mark.timeout(180)
def test_a_standby_streams_and_serves_reads_only(nodes):
    primary, (standby,) = pair(nodes)
    wait_for(lambda: count(standby) == 100, what="the base backup's rows")
    with primary.connect() as c:
        c.execute("insert into t values (101, 'new')")
        c.execute("update t set v = 'changed' where k = 1")
    wait_for(lambda: count(standby) == 101, what="a streamed insert")
    wait_for(lambda: standby.connect().execute("select v from t where k = 1").fetchone() == ("changed",),
             what="a streamed update")
    with standby.connect() as c:
        assert c.execute("select v from t where k = 1").fetchone() == ("changed",)
        assert c.execute("select pg_is_in_recovery()").fetchone() == (True,)
        for sql in ["insert into t values (999, 'x')", "create table u (a int)",
                    "update t set v = 'y' where k = 2", "delete from t"]:
            with pytest.raises(psycopg.Error) as ei:
                c.execute(sql)
            assert ei.value.sqlstate == "25006", sql
        with pytest.raises(psycopg.Error) as ei:
            c.execute("begin read write")
        assert ei.value.sqlstate == "0A000"
        c.execute("rollback")
        with pytest.raises(psycopg.Error) as ei:
            c.execute("select pg_current_wal_lsn()")
        assert ei.value.sqlstate == "55000"
        row = c.execute("select status, slot_name, sender_port from pg_stat_wal_receiver").fetchone()
        assert row == ("streaming", "s1", primary.port)
        replayed = c.execute("select pg_last_wal_replay_lsn()").fetchone()[0]
    with primary.connect() as c:
        assert c.execute("select pg_is_in_recovery()").fetchone() == (False,)
        rows = c.execute("select application_name, state, sync_state from pg_stat_replication").fetchall()
        assert rows == [("s1", "streaming", "async")]
        slots = c.execute("select slot_name, slot_type, active from pg_replication_slots").fetchall()
        assert slots == [("s1", "physical", True)]
        current = c.execute("select pg_current_wal_lsn()").fetchone()[0]
    hi, lo = (int(x, 16) for x in replayed.split("/"))
    chi, clo = (int(x, 16) for x in current.split("/"))
    assert (hi << 32 | lo) <= (chi << 32 | clo)
    # A standby restarted picks up where its log ends.
    standby.stop_clean()
    with primary.connect() as c:
        c.execute(values("t", range(200, 300), "w"))
    standby.start()
    wait_for(lambda: count(standby) == 201, what="the rows written while the standby was down")

    # Replay does not wait for standby readers: a transaction block that read a table the
    # primary drops is cancelled with PostgreSQL's recovery-conflict error, not shown an
    # empty or missing table. A lone query afterwards finds it gone.
    with primary.connect() as c:
        c.execute("create table gone (k int primary key)")
        c.execute("insert into gone values (1), (2)")
    # The table's rows, not only the table: its INSERT is a later record than its CREATE.
    wait_for(lambda: count(standby, "gone") == 2, what="gone's rows on s1")
    with standby.connect() as reader:
        reader.execute("begin isolation level repeatable read")
        assert reader.execute("select count(*) from gone").fetchone() == (2,)
        with primary.connect() as c:
            c.execute("drop table gone")
        wait_for(lambda: not table_exists(standby, "gone"), what="the drop on s1")
        with pytest.raises(psycopg.Error) as ei:
            reader.execute("select count(*) from gone")
        assert ei.value.sqlstate == "40001"
        assert ei.value.diag.message_primary == "canceling statement due to conflict with recovery"
        reader.execute("rollback")
        with pytest.raises(psycopg.Error) as ei:
            reader.execute("select count(*) from gone")
        assert ei.value.sqlstate == "42P01"


def commit_in_thread(node, sql: str, level: str, setup: str | None = None):
    """Run `sql` at `level` in a thread (after `setup`, if given); returns (thread, result
    dict)."""
    out: dict = {}

    def run():
        try:
            with psycopg.connect(node.conninfo(), autocommit=True) as c:
                c.add_notice_handler(lambda d: out.setdefault("notices", []).append(d.message_primary))
                c.execute(f"set synchronous_commit = {level}")
                if setup:
                    c.execute(setup)
                out["pid"] = c.execute("select pg_backend_pid()").fetchone()[0]
                out["started"] = True
                c.execute(sql)
                out["done"] = True
        except Exception as e:  # noqa: BLE001
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    wait_for(lambda: "started" in out or "error" in out, what="the committing session")
    return t, out


def assert_wait_cancelled(primary, out: dict, key: int) -> None:
    """The commit of row `key` returned with PostgreSQL's warning, and is invisible."""
    assert out.get("done"), out
    assert "canceling wait for synchronous replication due to user request" in out.get("notices", [])
    with primary.connect() as c:
        assert c.execute("select count(*) from t where k = %s", (key,)).fetchone() == (0,)


@pytest.mark.timeout(240)
def test_synchronous_commit_waits_for_the_standby_and_never_shows_what_it_lacks(nodes):
    primary, (standby,) = pair(nodes)
    set_conf(primary, synchronous_standby_names="s1")
    wait_for(lambda: primary.connect().execute(
        "select sync_state from pg_stat_replication").fetchone() == ("sync",), what="s1 to be sync")
    for i, level in enumerate(["remote_write", "on", "remote_apply", "local", "off"]):
        with primary.connect() as c:
            c.execute(f"set synchronous_commit = {level}")
            c.execute("insert into t values (%s, %s)", (1000 + i, level))
    # remote_apply: visible on the standby once the commit returns.
    with primary.connect() as c:
        c.execute("set synchronous_commit = remote_apply")
        c.execute("insert into t values (2000, 'applied')")
    with standby.connect() as c:
        assert c.execute("select v from t where k = 2000").fetchone() == ("applied",)

    # The standby goes away: commits wait, visibly, and show nothing meanwhile.
    standby.stop_clean()
    t, out = commit_in_thread(primary, "insert into t values (3000, 'waits')", "on")
    time.sleep(1.0)
    assert "done" not in out and "error" not in out
    with primary.connect() as c:
        assert c.execute("select count(*) from t where k = 3000").fetchone() == (0,)
        waits = c.execute("select wait_event_type, wait_event, state from pg_stat_activity where pid = %s",
                          (out["pid"],)).fetchone()
        assert waits == ("IPC", "SyncRep", "active")
    # An asynchronous commit after it in the commit order becomes visible only after it,
    # so it waits too: a snapshot is a prefix of the commit order.
    t2, out2 = commit_in_thread(primary, "insert into t values (3001, 'async')", "off")
    time.sleep(0.5)
    assert "done" not in out2 and "error" not in out2
    standby.start()
    t.join(timeout=60)
    t2.join(timeout=60)
    assert out.get("done"), out
    assert out2.get("done"), out2
    with primary.connect() as c:
        assert c.execute("select count(*) from t where k in (3000, 3001)").fetchone() == (2,)

    # A cancelled wait: a warning, and the row stays invisible until the standby has it.
    standby.stop_clean()
    t, out = commit_in_thread(primary, "insert into t values (4000, 'cancelled')", "on")
    time.sleep(0.5)
    with primary.connect() as c:
        assert c.execute("select pg_cancel_backend(%s)", (out["pid"],)).fetchone() == (True,)
    t.join(timeout=30)
    assert_wait_cancelled(primary, out, 4000)
    # Emptying synchronous_standby_names releases everything, as in PostgreSQL.
    t, out = commit_in_thread(primary, "insert into t values (4001, 'released')", "on")
    time.sleep(0.3)
    set_conf(primary, synchronous_standby_names="")
    t.join(timeout=30)
    assert out.get("done"), out
    with primary.connect() as c:
        assert c.execute("select count(*) from t where k in (4000, 4001)").fetchone() == (2,)
    # statement_timeout ends the wait as a cancel does, as in PostgreSQL.
    with primary.connect() as c:
        c.execute("create table u (k int, v text)")
        c.execute("insert into u values (1, 'a'), (2, 'b')")
    set_conf(primary, synchronous_standby_names="s1")
    t, out = commit_in_thread(primary, "insert into t values (4002, 'timed out')", "on",
                              setup="set statement_timeout = '300ms'")
    t.join(timeout=30)
    assert_wait_cancelled(primary, out, 4002)
    # A catalog change committed on its own is acknowledged only once the standby has it.
    t, out = commit_in_thread(primary, "alter table u add primary key (k)", "on")
    time.sleep(0.5)
    assert "done" not in out and "error" not in out, out
    standby.start()
    t.join(timeout=60)
    assert out.get("done"), out
    with standby.connect() as c:
        wait_for(lambda: c.execute("select count(*) from t where k = 4002").fetchone() == (1,),
                 what="the standby to have the timed-out commit")
    set_conf(primary, synchronous_standby_names="")
    # A bad value in the file changes nothing.
    set_conf(primary, synchronous_standby_names="FIRST 0 (s1)")
    with primary.connect() as c:
        assert c.execute("show synchronous_standby_names").fetchone() == ("",)


@pytest.mark.timeout(240)
def test_quorum_of_two_standbys(nodes):
    primary, (s1, s2) = pair(nodes, ("s1", "s2"))
    set_conf(primary, synchronous_standby_names="ANY 1 (s1, s2)")
    wait_for(lambda: sorted(primary.connect().execute(
        "select application_name, sync_state from pg_stat_replication").fetchall())
        == [("s1", "quorum"), ("s2", "quorum")], what="both standbys in the quorum")
    s1.stop_clean()
    with primary.connect() as c:
        c.execute("insert into t values (5000, 'one of two')")  # s2 is enough
    s2.stop_clean()
    t, out = commit_in_thread(primary, "insert into t values (5001, 'none')", "on")
    time.sleep(0.5)
    assert "done" not in out
    s1.start()
    t.join(timeout=60)
    assert out.get("done"), out
    wait_for(lambda: count(s1) == 102, what="s1 to catch up")


@pytest.mark.timeout(300)
def test_pg_receivewal_writes_the_primarys_segments(nodes, tmp_path):
    receivewal = shutil.which("pg_receivewal") or "/usr/lib/postgresql/15/bin/pg_receivewal"
    if not Path(receivewal).exists():
        pytest.skip("pg_receivewal is not installed")
    primary = nodes().start()
    out_dir = tmp_path / "archive"
    out_dir.mkdir()
    base = ["-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"]
    r = subprocess.run([receivewal, *base, "--slot", "archive", "--create-slot"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([receivewal, *base, "--slot", "archive", "-D", str(out_dir), "--no-loop"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with primary.connect() as c:
            c.execute("create table big (k int primary key, v text)")
            for i in range(20):  # about 20 MB of log: the first segment fills
                c.execute(values("big", range(i * 1000, i * 1000 + 1000), "x" * 1000))
        full = out_dir / "000000010000000000000000"
        wait_for(full.exists, timeout=60, what="pg_receivewal to finish the first segment")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    ours = (Path(primary.datadir) / "wal" / "0000000000000000").read_bytes()
    assert full.read_bytes() == ours
    with primary.connect() as c:
        assert c.execute("select active from pg_replication_slots where slot_name = 'archive'"
                         ).fetchone() == (False,)


@pytest.mark.timeout(120)
def test_wal_level_minimal_refuses_to_stream(nodes):
    primary = nodes({"wal_level": "minimal"}).start()
    with psycopg.connect(primary.conninfo(), autocommit=True) as c:
        pass
    r = subprocess.run(
        [str(_resolve_bin()), "basebackup", "-h", "127.0.0.1", "-p", str(primary.port),
         "-D", str(Path(primary.datadir).parent / "standby")],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode != 0
    assert 'wal_level \\"replica\\"' in r.stderr or 'wal_level "replica"' in r.stderr, r.stderr


@pytest.mark.timeout(240)
def test_no_long_fork_across_primary_and_standbys(nodes):
    """An Elle-style list-append check: writers append their transaction's id to a few
    lists on the primary; readers read every list in one statement on the primary and on
    both standbys. Snapshot isolation over one commit order allows only reads whose sets of
    transactions are nested: each read sees a prefix of the primary's commits, every
    transaction whole, each list as a prefix of its final value."""
    import random

    primary, standbys = pair(nodes, ("s1", "s2"))
    set_conf(primary, synchronous_standby_names="s1")  # s1 synchronous, s2 asynchronous
    keys = list(range(8))
    with primary.connect() as c:
        c.execute("create table lists (k int primary key, v text not null)")
        c.execute("insert into lists values " + ", ".join(f"({k}, '')" for k in keys))
    for s in standbys:
        wait_for(lambda s=s: count(s, "lists") == len(keys), what="the lists on a standby")
    stop = threading.Event()
    committed: dict[str, set[int]] = {}
    reads: list[tuple[str, dict[int, list[str]]]] = []
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        rng = random.Random(w)
        try:
            with psycopg.connect(primary.conninfo(), autocommit=True) as c:
                i = 0
                while not stop.is_set():
                    txn = f"w{w}x{i}"
                    i += 1
                    chosen = sorted(rng.sample(keys, rng.randint(1, 3)))
                    with c.transaction():
                        for k in chosen:
                            c.execute("update lists set v = v || %s where k = %s", (f",{txn}", k))
                    committed[txn] = set(chosen)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def reader(node, name: str) -> None:
        try:
            with psycopg.connect(node.conninfo(), autocommit=True) as c:
                while not stop.is_set():
                    rows = c.execute("select k, v from lists").fetchall()
                    reads.append((name, {k: [x for x in v.split(",") if x] for k, v in rows}))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    threads += [threading.Thread(target=reader, args=(n, name)) for n, name in
                [(primary, "primary"), (standbys[0], "s1"), (standbys[1], "s2")]]
    for t in threads:
        t.start()
    time.sleep(6)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    with primary.connect() as c:
        final = {k: [x for x in v.split(",") if x] for k, v in c.execute("select k, v from lists")}
    assert len(committed) > 50 and len(reads) > 50, (len(committed), len(reads))
    seen_sets = []
    for name, lists in reads:
        seen: set[str] = set()
        members = {}
        for k, values in lists.items():
            assert values == final[k][: len(values)], f"{name}: list {k} is not a prefix of its final value"
            seen.update(values)
            members[k] = set(values)
        for txn in seen:
            if txn in committed:
                for k in committed[txn]:
                    assert txn in members[k], f"{name}: saw {txn} in part (not in list {k})"
        seen_sets.append((len(seen), name, frozenset(seen)))
    seen_sets.sort(key=lambda x: x[0])
    for (_, n1, a), (_, n2, b) in zip(seen_sets, seen_sets[1:]):
        assert a <= b, f"long fork: a read on {n1} and one on {n2} each saw a commit the other did not"
    names = {name for _, name, _ in seen_sets}
    assert names == {"primary", "s1", "s2"}
    per_node = {n: sum(1 for _, m, _ in seen_sets if m == n) for n in sorted(names)}
    print(f"list-append: {len(committed)} transactions, {len(reads)} reads {per_node}, 0 anomalies")
