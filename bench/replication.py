#!/usr/bin/env python3
"""Synchronous replication benchmark: insert_serial.sql against a primary with standbys,
PostgreSQL 15 and SteadyDB side by side, on this machine.

For each system: a primary, two standbys made from it by a base backup (pg_basebackup -R
-C -S sN for PostgreSQL, `steadydb basebackup -S sN` for SteadyDB) and started with
application_name sN. Then pgbench runs insert_serial.sql in four settings:

  local         synchronous_commit = local, s1 streaming asynchronously, s2 stopped
  remote_write  synchronous_standby_names = 's1', synchronous_commit = remote_write
  on            synchronous_standby_names = 's1', synchronous_commit = on
  local_2       synchronous_commit = local, s1 and s2 streaming asynchronously
  any1_on       synchronous_standby_names = 'ANY 1 (s1, s2)', synchronous_commit = on

Each synchronous setting is compared with the local one that has as many standbys running
(`local` for one, `local_2` for two): the same CPU spent on streaming, without the wait.

Settings change through the primary's configuration file and pg_reload_conf(). The
primary, the standbys and pgbench share the machine, so each run also records the CPU
time each of them used (its whole process group) and the machine's idle share. Halfway
through each run, psql's expanded view of pg_stat_replication is saved.

Usage: bench/replication.py [--clients 64] [--duration 30] [--systems postgres,steadydb]
                            [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness import servers
from harness.servers import PostgresServer, SteadyDBServer, clean_env, log

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "bench" / "workloads" / "insert_serial.sql"
SETTINGS = [
    ("local", "", "local"),
    ("remote_write", "s1", "remote_write"),
    ("on", "s1", "on"),
    ("local_2", "", "local"),
    ("any1_on", "ANY 1 (s1, s2)", "on"),
]
# The local-commit setting each one is compared with (same standbys running).
BASELINE = {"local": "local", "remote_write": "local", "on": "local",
            "local_2": "local_2", "any1_on": "local_2"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) used so far by a server: its process and every process
    descended from it (PostgreSQL's backends, walsenders, startup and walreceiver each run
    in a session of their own, so the process group would miss them), plus the times of
    children that exited (backends end with their connections; the postmaster reaps them
    into its own children's times)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        stats[int(entry)] = (int(fields[1]), [int(f) for f in fields[11:15]])
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(stats[pid][1])
            todo += children.get(pid, [])
    return total / CLK_TCK


def machine_idle_seconds() -> float:
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    return (int(cpu[3]) + int(cpu[4])) / CLK_TCK


class PostgresStandby(PostgresServer):
    """A PostgreSQL standby: pg_basebackup from `primary` instead of initdb."""

    def __init__(self, primary: PostgresServer, name: str, workdir: Path, log_path: Path):
        super().__init__(primary.bin_dir, workdir, log_path, dict(primary.settings), primary.user)
        self.primary = primary
        self.app_name = name

    def start(self) -> None:
        self._own(self.workdir)
        self._own(self.sockdir)
        self.workdir.chmod(0o700)
        cmd = [str(self.bin_dir / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.primary.port),
               "-U", "postgres", "-D", str(self.datadir), "-R", "-C", "-S", self.app_name,
               "-X", "stream", "-c", "fast"]
        kwargs = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        with open(self.log_path, "ab") as lf:
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=clean_env(), **kwargs)
        if r.returncode != 0:
            raise RuntimeError(f"pg_basebackup failed (exit {r.returncode})\n" + self.log_tail())
        self.port = servers.free_port()
        cmd = [str(self.bin_dir / "postgres"), "-D", str(self.datadir), "-p", str(self.port),
               "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.sockdir}",
               "-c", f"cluster_name={self.app_name}"]
        for k, v in self.settings.items():
            cmd += ["-c", f"{k}={v}"]
        self._spawn(cmd, self.user)
        self.wait_ready()

    def config_file(self) -> Path:
        return self.datadir / "postgresql.conf"


class SteadyDBStandby(SteadyDBServer):
    def __init__(self, primary: SteadyDBServer, name: str, workdir: Path, log_path: Path):
        super().__init__(primary.binary, workdir, log_path, dict(primary.settings))
        self.primary = primary
        self.app_name = name

    def start(self) -> None:
        cmd = [str(self.binary), "basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port),
               "-D", str(self.datadir), "-S", self.app_name, "--application-name", self.app_name]
        with open(self.log_path, "ab") as lf:
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=clean_env())
        if r.returncode != 0:
            raise RuntimeError(f"steadydb basebackup failed (exit {r.returncode})\n" + self.log_tail())
        super().start()


def config_path(server) -> Path:
    if isinstance(server, PostgresServer):
        return server.datadir / "postgresql.conf"
    return server.datadir / "steadydb.conf"


def reconfigure(primary, names: str, level: str) -> None:
    """Set synchronous_standby_names and synchronous_commit in the primary's file; reload."""
    path = config_path(primary)
    text = path.read_text()
    text = re.sub(r"(?m)^(synchronous_standby_names|synchronous_commit)\s*=.*\n", "", text)
    text += f"synchronous_standby_names = '{names}'\nsynchronous_commit = {level}\n"
    path.write_text(text)
    with primary.connect() as c:
        c.query("select pg_reload_conf()")
    time.sleep(1.0)
    with primary.connect() as c:
        got = (c.query("show synchronous_standby_names").scalar(), c.query("show synchronous_commit").scalar())
    if got != (names, level):
        raise RuntimeError(f"{primary.label}: reload gave {got}, wanted {(names, level)}")


def psql_view(primary, pg_bin: Path, out: Path) -> None:
    cmd = [str(pg_bin / "psql"), "-X", "-x", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
           "-c", "select application_name, state, sent_lsn, write_lsn, flush_lsn, replay_lsn, write_lag, "
                 "flush_lag, replay_lag, sync_priority, sync_state, reply_time from pg_stat_replication "
                 "order by application_name", "postgres"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    out.write_text(r.stdout + r.stderr)


def run_setting(primary, standbys: list, pg_bin: Path, clients: int, duration: int, out_dir: Path,
                name: str) -> dict:
    cmd = [str(pg_bin / "pgbench"), "-M", "prepared", "-n", "-c", str(clients), "-j", "2",
           "-T", str(duration), "-f", str(SCRIPT), "-h", "127.0.0.1", "-p", str(primary.port),
           "-U", "postgres", "postgres"]
    groups = {"primary": primary.proc.pid}
    for s in standbys:
        if s.alive():
            groups[s.app_name] = s.proc.pid
    before = {k: group_cpu_seconds(p) for k, p in groups.items()}
    idle_before = machine_idle_seconds()
    started = time.time()
    view = threading.Timer(duration / 2, psql_view,
                           args=(primary, pg_bin, out_dir / f"{primary.name}-{name}-pg_stat_replication.txt"))
    view.start()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
                            start_new_session=True, text=True)
    stdout, stderr = proc.communicate(timeout=duration * 3 + 120)
    elapsed = time.time() - started
    view.join()
    time.sleep(0.5)  # exited backends are reaped into the postmaster's children's times
    after = {k: group_cpu_seconds(p) for k, p in groups.items()}
    idle = machine_idle_seconds() - idle_before
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", stdout)
    (out_dir / f"{primary.name}-{name}-pgbench.txt").write_text(stdout + stderr)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"pgbench failed ({proc.returncode}):\n{stderr[-2000:]}")
    cpu = {k: round((after[k] - before[k]) / elapsed, 2) for k in groups}
    return {"tps": float(m.group(1)), "cores": cpu, "idle_cores": round(idle / elapsed, 2)}


def run_system(system: str, a, out_dir: Path, binary: Path | None) -> list[dict]:
    root = servers.make_tempdir(f"sbrepl-{system}-", Path(a.data_root) if a.data_root else None)
    root.chmod(0o711)  # PostgreSQL runs as an unprivileged user when we are root
    settings = {"fsync": "on", "shared_buffers": "128MB", "max_connections": "300",
                "max_wal_size": "4GB"}
    pg_bin = Path(a.pg_bin_dir)
    if system == "postgres":
        user = servers.ensure_bench_user()
        primary = PostgresServer(pg_bin, root / "primary", out_dir / "postgres-primary.log", settings, user)
        make = lambda n: PostgresStandby(primary, n, root / n, out_dir / f"postgres-{n}.log")  # noqa: E731
    else:
        primary = SteadyDBServer(binary, root / "primary", out_dir / "steadydb-primary.log", settings)
        make = lambda n: SteadyDBStandby(primary, n, root / n, out_dir / f"steadydb-{n}.log")  # noqa: E731
    (root / "primary").mkdir(parents=True, exist_ok=True)
    if isinstance(primary, PostgresServer):
        primary._own(root / "primary")
    results = []
    try:
        primary.start()
        with primary.connect() as c:
            c.query("create table test(id serial primary key, info text, crt_time timestamp)")
        standbys = []
        for n in ("s1", "s2"):
            s = make(n)
            s.workdir.mkdir(parents=True, exist_ok=True)
            if isinstance(s, PostgresServer):
                s._own(s.workdir)
            s.start()
            standbys.append(s)
        standbys[1].stop()  # s2 comes back for the ANY setting
        for name, names, level in SETTINGS:
            if name in ("local_2", "any1_on") and not standbys[1].alive():
                standbys[1].start_again()
            reconfigure(primary, names, level)
            time.sleep(2)
            r = run_setting(primary, standbys, pg_bin, a.clients, a.duration, out_dir, name)
            r.update(system=system, setting=name, names=names, level=level)
            log(f"{primary.label} {name}: {r['tps']:.1f} tps, cores {r['cores']}, idle {r['idle_cores']}")
            results.append(r)
    finally:
        for s in [primary] + [x for x in locals().get("standbys", [])]:
            s.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    return results


def start_again(self) -> None:
    """Start a stopped standby on its existing data directory, on the same port."""
    if isinstance(self, PostgresServer):
        cmd = [str(self.bin_dir / "postgres"), "-D", str(self.datadir), "-p", str(self.port),
               "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.sockdir}",
               "-c", f"cluster_name={self.app_name}"]
        for k, v in self.settings.items():
            cmd += ["-c", f"{k}={v}"]
        self._spawn(cmd, self.user)
    else:
        cmd = [str(self.binary), "server", "--auth", "trust", "-D", str(self.datadir), "-p", str(self.port),
               "-c", f"unix_socket_directories={self.sockdir}"]
        for k, v in self.settings.items():
            cmd += ["-c", f"{k}={v}"]
        self._spawn(cmd)
    self.wait_ready()


PostgresStandby.start_again = start_again
SteadyDBStandby.start_again = start_again


def report(results: list[dict], a) -> str:
    by = {(r["system"], r["setting"]): r for r in results}
    lines = [f"# Synchronous replication: insert_serial.sql, {a.clients} clients, {a.duration} s per run",
             "", "Primary, standbys and pgbench share this machine; cores = CPU seconds per second of "
             "each process group (idle = the machine's idle cores).", "",
             "| setting | PostgreSQL tps | SteadyDB tps | ratio | SteadyDB / its local (same standbys) | PG CPU (primary, s1, s2, idle) | SteadyDB CPU (primary, s1, s2, idle) |",
             "|---|---:|---:|---:|---:|---|---|"]
    for name, _, _ in SETTINGS:
        pg, sd = by.get(("postgres", name)), by.get(("steadydb", name))
        local = by.get(("steadydb", BASELINE[name]))
        cell = lambda r: f"{r['tps']:,.1f}" if r else "-"  # noqa: E731
        ratio = f"{sd['tps'] / pg['tps']:.2f}" if pg and sd else "-"
        own = f"{sd['tps'] / local['tps']:.2f}" if sd and local else "-"
        cpu = lambda r: ", ".join(str(r["cores"].get(k, "-")) for k in ("primary", "s1", "s2")) + f", {r['idle_cores']}" if r else "-"  # noqa: E731
        lines.append(f"| {name} | {cell(pg)} | {cell(sd)} | {ratio} | {own} | {cpu(pg)} | {cpu(sd)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--duration", type=int, default=30)
    p.add_argument("--systems", default="postgres,steadydb")
    p.add_argument("--steadydb-bin", default=str(REPO / "target" / "release" / "steadydb"))
    p.add_argument("--pg-bin-dir", default=str(servers.PG_BIN_DEFAULT))
    p.add_argument("--data-root", default=None)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    servers.install_signal_handlers()
    out_dir = Path(a.out or REPO / "bench" / "results" / time.strftime("replication-%Y%m%d-%H%M%S"))
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for system in a.systems.split(","):
        if system == "postgres":
            servers.ensure_postgres_installed(Path(a.pg_bin_dir))
        results += run_system(system, a, out_dir, Path(a.steadydb_bin))
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    text = report(results, a)
    (out_dir / "results.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
