"""Failover: a primary with two standbys (`FIRST 1`, `synchronous_commit = on`) and 32
clients recording every acknowledged commit is killed with SIGKILL at a random moment; the
synchronous standby is promoted and must hold every acknowledged commit, each transaction
whole. The other standby follows the new primary onto its timeline, and the old primary
rejoins as a standby through a new base backup. Repeated STEADYDB_FAILOVER_ROUNDS times
(default 20). Also: with both standbys killed the primary waits, and resumes when one
comes back; an old primary that a standby of the new timeline reaches refuses writes."""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from crash_util import env_int, nodes, seed_from_env  # noqa: F401  (fixture)
from test_replication import basebackup, set_conf, wait_for

pytestmark = pytest.mark.steadydb_only

ROUNDS = env_int("STEADYDB_FAILOVER_ROUNDS", 20)
CLIENTS = 32


class Load:
    """CLIENTS threads, each committing transactions of two rows (2·id, 2·id + 1) and
    recording the ids whose COMMIT was acknowledged."""

    def __init__(self, node, ids):
        self.node = node
        self.ids = ids
        self.acked: set[int] = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(CLIENTS)]

    def run(self) -> None:
        try:
            with psycopg.connect(self.node.conninfo(), autocommit=True, connect_timeout=5) as c:
                while not self.stop.is_set():
                    i = next(self.ids)
                    with c.transaction():
                        c.execute("insert into acks values (%s, %s), (%s, %s)", (2 * i, i, 2 * i + 1, i))
                    with self.lock:
                        self.acked.add(i)
        except psycopg.Error:
            pass  # the primary is gone

    def start(self) -> "Load":
        for t in self.threads:
            t.start()
        return self

    def finish(self) -> set[int]:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        return self.acked

    def count(self) -> int:
        with self.lock:
            return len(self.acked)


def standby_of(nodes_factory, primary, name: str):
    node = nodes_factory()
    basebackup(primary, node, name)
    node.start()
    node.fixed_port = node.port
    node.app_name = name
    return node


def point_at(node, primary) -> None:
    """Make `node`'s primary_conninfo name `primary` (it takes effect at its next start).
    Slots are a server's own, as in PostgreSQL: the node streams without one from now on."""
    path = Path(node.datadir) / "steadydb.conf"
    lines = [l for l in path.read_text().splitlines()
             if not l.startswith(("primary_conninfo", "primary_slot_name"))]
    lines.append(f"primary_conninfo = 'host=127.0.0.1 port={primary.port} user=postgres "
                 f"application_name={node.app_name}'")
    path.write_text("\n".join(lines) + "\n")


def sync_standby(primary) -> str | None:
    with primary.connect() as c:
        row = c.execute("select application_name from pg_stat_replication where sync_state = 'sync'").fetchone()
    return row[0] if row else None


def check_all_there(node, acked: set[int]) -> None:
    with node.connect() as c:
        rows = c.execute("select id, count(*) from acks group by id").fetchall()
    present = {i for i, n in rows}
    partial = [i for i, n in rows if n != 2]
    assert not partial, f"transactions partly there: {partial[:10]}"
    lost = acked - present
    assert not lost, f"{len(lost)} acknowledged commits lost, e.g. {sorted(lost)[:10]}"


@pytest.mark.timeout(1200)
def test_acknowledged_commits_survive_failover(nodes):
    rng = random.Random(seed_from_env("STEADYDB_FAILOVER_SEED"))
    primary = nodes()
    primary.start()
    primary.fixed_port = primary.port
    primary.app_name = "n0"
    with primary.connect() as c:
        c.execute("create table acks (k bigint primary key, id bigint not null)")
    standbys = [standby_of(nodes, primary, f"n{i}") for i in (1, 2)]
    set_conf(primary, synchronous_standby_names=f"FIRST 1 ({standbys[0].app_name}, {standbys[1].app_name})")
    wait_for(lambda: sync_standby(primary) == standbys[0].app_name, what="a synchronous standby")
    ids = itertools.count(1)
    all_acked: set[int] = set()
    rebuilt = 0

    # Both standbys gone: commits wait; one back: they resume.
    load = Load(primary, ids).start()
    wait_for(lambda: load.count() > 100, what="commits")
    for s in standbys:
        s.kill()
    time.sleep(0.5)
    stalled = load.count()
    time.sleep(1.0)
    assert load.count() == stalled, "commits were acknowledged with no synchronous standby"
    standbys[1].start()
    wait_for(lambda: load.count() > stalled + 50, what="commits after a standby came back")
    standbys[0].start()
    all_acked |= load.finish()

    for round_ in range(ROUNDS):
        wait_for(lambda: sync_standby(primary) is not None, what="a synchronous standby")
        sync_name = sync_standby(primary)
        promoted = next(s for s in standbys if s.app_name == sync_name)
        other = next(s for s in standbys if s is not promoted)
        load = Load(primary, ids).start()
        time.sleep(rng.uniform(0.2, 1.5))
        primary.kill()
        all_acked |= load.finish()
        with promoted.connect() as c:
            assert c.execute("select pg_promote()").fetchone() == (True,)
            assert c.execute("select pg_is_in_recovery()").fetchone() == (False,)
        check_all_there(promoted, all_acked)
        # The other standby follows the new primary onto its timeline, unless it received
        # more of the old timeline than the promoted one had (commits never acknowledged):
        # then it is made again from the new primary, as after pg_rewind.
        other.terminate()
        point_at(other, promoted)
        other.start()
        diverged = "make it again with steadydb basebackup"
        wait_for(lambda: diverged in other.log() or promoted.connect().execute(
            "select 1 from pg_stat_replication where application_name = %s and state = 'streaming'",
            (other.app_name,)).fetchone() is not None, timeout=60, what="the other standby to follow or refuse")
        if diverged in other.log():
            rebuilt += 1
            other.terminate()
            shutil.rmtree(other.datadir)
            basebackup(promoted, other, other.app_name)
            other.start()
        # The old primary rejoins: a new base backup from the new primary.
        old = primary
        shutil.rmtree(old.datadir)
        basebackup(promoted, old, old.app_name)
        old.start()
        primary = promoted
        standbys = [other, old]
        set_conf(primary, synchronous_standby_names=f"FIRST 1 ({other.app_name}, {old.app_name})")
        wait_for(lambda: len(primary.connect().execute(
            "select 1 from pg_stat_replication where state = 'streaming'").fetchall()) == 2,
            timeout=60, what=f"round {round_}: both standbys streaming from the new primary")
    check_all_there(primary, all_acked)
    print(f"{ROUNDS} failovers, {len(all_acked)} acknowledged commits kept; "
          f"the other standby followed {ROUNDS - rebuilt} times and was made again {rebuilt} times")
    for s in standbys:
        wait_for(lambda s=s: s.connect().execute("select count(*) from acks").fetchone()[0]
                 == primary.connect().execute("select count(*) from acks").fetchone()[0],
                 timeout=60, what="the standbys to catch up")


@pytest.mark.timeout(300)
def test_an_old_primary_reached_by_a_newer_timeline_refuses_writes(nodes):
    primary = nodes()
    primary.start()
    primary.fixed_port = primary.port
    with primary.connect() as c:
        c.execute("create table t (k int primary key)")
        c.execute("insert into t values (1)")
    s1 = standby_of(nodes, primary, "s1")
    s2 = standby_of(nodes, primary, "s2")
    wait_for(lambda: s2.connect().execute("select count(*) from t").fetchone() == (1,), what="s2")
    primary.terminate()
    with s1.connect() as c:
        c.execute("select pg_promote()")
        c.execute("insert into t values (2)")
    # s2 follows s1 onto timeline 2.
    s2.terminate()
    s2.app_name = "s2"
    point_at(s2, s1)
    s2.start()
    wait_for(lambda: s2.connect().execute("select count(*) from t").fetchone() == (2,), what="s2 on timeline 2")
    # The old primary comes back as a primary, and s2 is pointed at it by mistake.
    primary.start()
    with primary.connect() as c:
        c.execute("insert into t values (3)")  # nobody told it yet
    s2.terminate()
    point_at(s2, primary)
    s2.start()
    def refused() -> bool:
        try:
            with primary.connect() as c:
                c.execute("insert into t values (4)")
            return False
        except psycopg.Error as e:
            return e.sqlstate == "25006" and "no longer the primary" in str(e)
    wait_for(refused, timeout=30, what="the old primary to refuse writes")
    # It stays fenced across a restart, and s2 never took its timeline-1 write.
    primary.terminate()
    primary.start()
    assert refused()
    with s2.connect() as c:
        assert c.execute("select k from t order by k").fetchall() == [(1,), (2,)]
