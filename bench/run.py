#!/usr/bin/env python3
"""Side-by-side pgbench benchmark of SteadyDB and PostgreSQL 15 on this machine.

    python bench/run.py                       # the standard set (see bench/README.md)
    python bench/run.py --workloads tpcb --clients 1,32 --duration 60 --checkpoint-at 30
    python bench/run.py --checkpoint-dip      # = --preset checkpoint-dip (see PRESETS)

For every (workload, client count) each system gets a fresh server and data directory,
its data is set up, a CHECKPOINT is taken, and pgbench runs for --duration seconds.
The systems run one after the other, never at the same time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

if sys.version_info < (3, 9):
    sys.exit("bench/run.py needs Python 3.9 or newer (3.11 recommended)")

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from harness import dip, report, servers, stages, steadiness  # noqa: E402
from harness.pgbench import run_pgbench  # noqa: E402
from harness.servers import REGISTRY, log, warn  # noqa: E402
from harness.workloads import STANDARD_SET, WORKLOADS, prepare_script, setup  # noqa: E402

MAX_LOG_LINES = 5_000_000  # above this (estimated), per-transaction logs are sampled

# Named option sets; options given on the command line override them.
PRESETS = {
    # throughput and WAL volume around CHECKPOINTs issued mid-run (bench/README.md, "Checkpoint dip")
    "checkpoint-dip": {"workloads": ["update_pk"], "update_pk_rows": 1_000_000, "clients": [32],
                       "duration": 120, "checkpoint_at": [30.0, 60.0], "systems": ["postgres", "steadydb"]},
}


def csv_list(conv):
    def parse(text: str):
        try:
            items = [conv(x.strip()) for x in text.split(",") if x.strip()]
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        return items
    return parse


def positive_int(text: str) -> int:
    v = int(text)
    if v <= 0:
        raise ValueError(f"{text} is not a positive integer")
    return v


def conf_pair(text: str) -> tuple[str, str]:
    if "=" not in text or not text.split("=", 1)[0].strip():
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()


def sampling(text: str):
    if text == "auto":
        return "auto"
    v = float(text)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError("sampling rate must be in (0, 1] or 'auto'")
    return v


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="a named set of options; options given explicitly override it. checkpoint-dip: "
                        + ", ".join(f"{k}={v}" for k, v in PRESETS["checkpoint-dip"].items()))
    p.add_argument("--checkpoint-dip", dest="preset", action="store_const", const="checkpoint-dip",
                   help="same as --preset checkpoint-dip")
    p.add_argument("--workloads", type=csv_list(str), default=list(STANDARD_SET),
                   help=f"comma-separated, from: {', '.join(WORKLOADS)} (default: {','.join(STANDARD_SET)})")
    p.add_argument("--clients", type=csv_list(positive_int), default=[1, 32, 128],
                   help="comma-separated client counts (default: 1,32,128)")
    p.add_argument("--duration", type=positive_int, default=30, help="seconds per run (default: 30)")
    p.add_argument("--scale", type=positive_int, default=10,
                   help="pgbench scale for tpcb/select_pk/update_balance (default: 10)")
    p.add_argument("--update-pk-rows", type=positive_int, default=1_000_000,
                   help="rows loaded into tbl for update_pk (default: 1000000)")
    p.add_argument("--shared-buffers", default="128MB", help="shared_buffers for both systems (default: 128MB)")
    p.add_argument("--systems", type=csv_list(str), default=["postgres", "steadydb"],
                   help="comma-separated, run in this order (default: postgres,steadydb)")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="pgbench -j (capped at the client count; default: min(clients, 2 * nproc))")
    p.add_argument("--transport", choices=["unix", "tcp"], default="unix",
                   help="how pgbench and psql reach both servers: the Unix-domain socket, as pgbench does by "
                        "default on one machine, or TCP to 127.0.0.1 (default: unix)")
    p.add_argument("--tls", action="store_true",
                   help="clients connect over TCP with sslmode=require to both servers, each with "
                        "ssl = on and a certificate made for the run (openssl)")
    p.add_argument("--role", default=None,
                   help="pgbench connects as this role, made after loading with SELECT, INSERT, UPDATE "
                        "and DELETE on every table and USAGE on every sequence (default: the "
                        "superuser postgres): what privilege checks cost")
    p.add_argument("--steadydb-bin", default=None,
                   help="SteadyDB binary (default: target/release/steadydb in the repository, "
                        "built with cargo build --release if missing)")
    p.add_argument("--pg-bin-dir", default=str(servers.PG_BIN_DEFAULT),
                   help=f"PostgreSQL 15 binaries (default: {servers.PG_BIN_DEFAULT}; "
                        "installed from Debian's postgresql-15 if missing)")
    p.add_argument("--out", default=None, help="output directory (default: bench/results/<timestamp>)")
    p.add_argument("--data-root", default=None,
                   help="where the temporary data directories go (default: the system temp dir); "
                        "must be a real disk for the fsync numbers to mean anything")
    p.add_argument("--checkpoint-at", type=csv_list(float), default=[],
                   help="issue CHECKPOINT at these seconds into every run (e.g. 30,60)")
    p.add_argument("--extra-steadydb-conf", type=conf_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="extra -c setting for SteadyDB (repeatable)")
    p.add_argument("--extra-postgres-conf", type=conf_pair, action="append", default=[], metavar="NAME=VALUE",
                   help="extra -c setting for PostgreSQL (repeatable)")
    p.add_argument("--sampling-rate", type=sampling, default="auto",
                   help="pgbench --sampling-rate for the per-transaction log: a number in (0,1], or 'auto' "
                        f"(1, unless the log is expected to exceed {MAX_LOG_LINES:,} lines; default)")
    p.add_argument("--server-cpus", type=csv_list(positive_int), default=None, metavar="N[,M,...]",
                   help="pin each server (and all its processes) to CPUs 0..N-1 and pgbench/psql to the rest; "
                        "with several values every (workload, clients, system) runs once per value and "
                        "results.md gets a scaling report (default: no pinning)")
    p.add_argument("--keep-txn-logs", action="store_true",
                   help="keep pgbench's per-transaction logs (deleted after computing percentiles by default)")
    preset = p.parse_known_args(argv)[0].preset
    if preset:
        p.set_defaults(**PRESETS[preset])
    a = p.parse_args(argv)
    unknown = [w for w in a.workloads if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    bad = [s for s in a.systems if s not in ("postgres", "steadydb")]
    if bad or len(set(a.systems)) != len(a.systems):
        p.error("--systems takes postgres and/or steadydb")
    if any(t < 0 for t in a.checkpoint_at):
        p.error("--checkpoint-at times must be >= 0")
    if a.server_cpus:
        nproc = len(os.sched_getaffinity(0))
        too_many = [n for n in a.server_cpus if n >= nproc]
        if too_many:
            p.error(f"--server-cpus {','.join(map(str, too_many))}: this machine has {nproc} CPUs and pgbench "
                    f"needs at least one of them; use values from 1 to {nproc - 1}")
        if len(set(a.server_cpus)) != len(a.server_cpus):
            p.error("--server-cpus values must be different")
        if not shutil.which("taskset"):
            p.error("--server-cpus needs taskset (util-linux)")
    return a


def system_settings(a: argparse.Namespace) -> dict[str, dict[str, str]]:
    common = {"fsync": "on", "synchronous_commit": "on", "shared_buffers": a.shared_buffers,
              "max_connections": "300"}
    out = {"postgres": dict(common), "steadydb": dict(common)}
    for system, extras in (("postgres", a.extra_postgres_conf), ("steadydb", a.extra_steadydb_conf)):
        for k, v in extras:
            out[system][k] = v
    for k in common:
        if out["postgres"][k] != out["steadydb"][k]:
            warn(f"{k} is {out['postgres'][k]} for PostgreSQL and {out['steadydb'][k]} for SteadyDB "
                 "(--extra-*-conf): the comparison is no longer like for like")
    return out


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        warn("matplotlib is not installed, so no plots will be drawn (JSON and tables are still written). "
             "Install it with: pip install -r bench/requirements.txt  (or use bench/run.sh, which sets up a venv)")
        return False


def tool_version(cmd: list[str]) -> str | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip() or None
    except OSError:
        return None


class Bench:
    def __init__(self, a: argparse.Namespace):
        self.a = a
        self.pg_bin = Path(a.pg_bin_dir)
        self.nproc = len(os.sched_getaffinity(0))
        self.settings = system_settings(a)
        self.tls_files = None
        if a.tls:
            a.transport = "tcp"
            servers.CLIENT_SSLMODE = "require"
            self.tls_files = make_certificate(Path(tempfile.mkdtemp(prefix="sbtls-")))
        self.max_tps_seen: dict[str, float] = {}
        self.problems: list[str] = []
        self.steadydb_copy: Path | None = None
        self.bench_user = None
        # {N: (server CPUs, client CPUs)} for --server-cpus
        allowed = sorted(os.sched_getaffinity(0))
        self.cpu_sets = {n: servers.split_cpus(n, allowed) for n in (a.server_cpus or [])}
        self.stage_view_missing: str | None = None  # noted once, then stages are no longer sampled

    def threads(self, clients: int) -> int:
        return min(clients, self.a.threads or 2 * self.nproc)

    def sampling_rate(self, workload: str) -> float:
        if self.a.sampling_rate != "auto":
            return self.a.sampling_rate
        # estimate from the fastest run of this workload so far (x2 for more clients / the other system)
        est = self.max_tps_seen.get(workload, 0) * self.a.duration * 2
        if est <= MAX_LOG_LINES:
            return 1.0
        return float(f"{MAX_LOG_LINES / est:.2g}")

    def make_server(self, system: str, workdir: Path, log_path: Path, server_cpus: int | None):
        if system == "postgres":
            server = servers.PostgresServer(self.pg_bin, workdir, log_path, self.settings["postgres"],
                                            self.bench_user)
        else:
            server = servers.SteadyDBServer(self.steadydb_copy, workdir, log_path, self.settings["steadydb"])
        server.transport = self.a.transport
        server.tls_files = self.tls_files
        if server_cpus is not None:
            server.cpus, server.client_cpus = self.cpu_sets[server_cpus]
        return server

    def run_one(self, system: str, wname: str, clients: int, script: Path | None, results: dict,
                server_cpus: int | None = None) -> dict:
        a = self.a
        w = WORKLOADS[wname]
        tag = f"{wname}_c{clients}" + (f"_cpus{server_cpus}" if server_cpus else "") + f"_{system}"
        runs_dir = self.out / "runs"
        runs_dir.mkdir(exist_ok=True)
        workdir = self.data_root / tag
        workdir.mkdir()
        rec: dict = {"workload": wname, "clients": clients, "threads": self.threads(clients), "system": system,
                     "status": "error", "settings": self.settings[system],
                     "server_log": str(runs_dir / f"{tag}.server.log"),
                     "setup_log": str(runs_dir / f"{tag}.setup.log")}
        if server_cpus is not None:
            server_set, client_set = self.cpu_sets[server_cpus]
            rec.update({"server_cpus": server_cpus, "server_cpu_set": servers.cpu_list_text(server_set),
                        "client_cpu_set": servers.cpu_list_text(client_set)})
        server = self.make_server(system, workdir, Path(rec["server_log"]), server_cpus)
        notes: list[str] = []  # warnings printed after the run's line
        label = report.LABELS[system]
        print(f"  {label:<10} start", end="", flush=True)
        try:
            t0 = time.monotonic()
            server.start()
            rec["startup_seconds"] = round(time.monotonic() - t0, 2)
            rec["server_affinity"] = server.affinity()
            with server.connect() as c:
                version = c.query("show server_version").scalar()
            sw = results["software"].setdefault(system, {})
            if sw.get("server_version") not in (None, version):
                warn(f"{label} reported server_version {version!r}, earlier {sw['server_version']!r}")
            sw["server_version"] = version
            print(f" {rec['startup_seconds']:.1f}s, setup", end="", flush=True)
            t0 = time.monotonic()
            rec["setup_steps"] = setup(w, server, self.pg_bin, a.scale, a.update_pk_rows, Path(rec["setup_log"]))
            with server.connect(timeout=3600) as c:
                if a.role:
                    for sql in (f'create role "{a.role}" login',
                                f'grant select, insert, update, delete on all tables in schema public to "{a.role}"',
                                f'grant usage on all sequences in schema public to "{a.role}"'):
                        c.query(sql)
                t1 = time.monotonic()
                c.query("checkpoint")
                rec["post_setup_checkpoint_seconds"] = round(time.monotonic() - t1, 3)
            rec["setup_seconds"] = round(time.monotonic() - t0, 2)
            print(f" {rec['setup_seconds']:.1f}s, pgbench {a.duration}s ...", end="", flush=True)
            extra = ["-s", str(a.scale)] if w.pgbench_init and script is not None else []
            res = run_pgbench(server, self.pg_bin, script=script, extra_args=extra, clients=clients,
                              threads=self.threads(clients), duration=a.duration,
                              sampling_rate=self.sampling_rate(wname), checkpoint_at=self.checkpoint_at,
                              files_prefix=runs_dir / tag, user=a.role or "postgres",
                              sample_stages=system == "steadydb" and self.stage_view_missing is None)
            rec.update(res)
            if res["pgbench_exit_code"] != 0:
                rec["error"] = (f"pgbench exited with {res['pgbench_exit_code']}: "
                                + " | ".join(res.get("pgbench_messages", [])[-3:]))
            elif res.get("tps") is None:
                rec["error"] = "no tps in pgbench's output"
            elif not server.alive():
                rec["error"] = "server exited during the run"
            else:
                rec["status"] = "ok"
            if rec.get("tps"):
                self.max_tps_seen[wname] = max(self.max_tps_seen.get(wname, 0), rec["tps"])
            if rec.get("wal_series_error"):
                warn(f"{tag}: sampling pg_stat_wal failed: {rec['wal_series_error']}")
            rec["tps_cv"] = steadiness.tps_cv(rec.get("progress") or [])
            notes += self.analyse_stages(rec, runs_dir / f"{tag}.stages.csv", results)
            try:
                figures = dip.checkpoint_dip(rec)
                if figures:
                    rec["checkpoint_dip"] = figures
            except Exception as e:  # an analysis problem must not lose the run
                rec["checkpoint_dip_error"] = f"{type(e).__name__}: {e}"
                warn(f"{tag}: computing the checkpoint dip failed: {rec['checkpoint_dip_error']}")
            for cp in rec.get("checkpoints", []):
                if cp.get("error"):
                    self.problems.append(f"{tag}: CHECKPOINT at {cp['requested_at_s']} s failed: {cp['error']}")
        except KeyboardInterrupt:
            rec["error"] = "interrupted"
            raise
        except Exception as e:  # record, clean up, go on with the next run
            rec["error"] = f"{type(e).__name__}: {e}"
            rec["traceback"] = traceback.format_exc()
        finally:
            server.cleanup()
            rec["server_exit_code"] = server.exit_code
            rec["server_commands"] = server.commands
            if not a.keep_txn_logs:
                for f in rec.get("txn_log_files", []):
                    Path(f).unlink(missing_ok=True)
                rec["txn_logs_deleted"] = True
                try:
                    (runs_dir / "txnlog").rmdir()  # only if empty
                except OSError:
                    pass
            results["runs"].append(rec)
        if rec["status"] == "ok":
            print(f" {rec['tps']:,.1f} tps, p50 {rec.get('p50_ms', float('nan')):.3f} ms, "
                  f"p99 {rec.get('p99_ms', float('nan')):.3f} ms, {rec.get('failed_transactions', '?')} failed"
                  + (f", tps CV {rec['tps_cv']:.3f}" if rec.get("tps_cv") is not None else "")
                  + (f", {report.lowest_ceiling_text(rec['stages'])}" if rec.get("stages") else "")
                  + (f" (log sampled at {rec['sampling_rate']:g})" if rec.get("sampling_rate", 1) < 1 else ""))
        else:
            print(" ERROR")
            print(f"    {rec['error']}".replace("\n", "\n    "), file=sys.stderr)
            self.problems.append(f"{tag}: {rec['error'].splitlines()[0]}")
        for note in notes:
            warn(note)
        if rec.get("failed_transactions"):
            self.problems.append(f"{tag}: pgbench reported {rec['failed_transactions']} failed transactions")
        if server.was_running and server.exit_code != 0:
            self.problems.append(f"{tag}: {label} exited with code {server.exit_code} when asked to stop")
        return rec

    def analyse_stages(self, rec: dict, csv_path: Path, results: dict) -> list[str]:
        """The stage figures of a SteadyDB run (`stages.py`); a missing view is noted once.
        Returns the warnings to print."""
        notes = []
        missing = rec.pop("stage_view_missing", None)
        if missing and self.stage_view_missing is None:
            self.stage_view_missing = missing
            results["stage_view_missing"] = missing
            notes.append(f"SteadyDB has no {stages.VIEW} ({missing}); stages are not sampled in this benchmark")
        samples = rec.pop("stage_samples", None)
        if rec.get("stage_series_error"):
            notes.append(f"{csv_path.name}: sampling {stages.VIEW} failed: {rec['stage_series_error']}")
        if samples:
            try:
                stages.analyse(rec, samples, csv_path)
            except Exception as e:  # an analysis problem must not lose the run
                rec["stages_error"] = f"{type(e).__name__}: {e}"
                notes.append(f"{csv_path.name}: computing the stage ceilings failed: {rec['stages_error']}")
        return notes

    def run(self) -> int:
        a = self.a
        started = dt.datetime.now().astimezone()
        stamp = started.strftime("%Y%m%d-%H%M%S")
        self.out = Path(a.out).resolve() if a.out else BENCH_DIR / "results" / stamp
        self.out.mkdir(parents=True, exist_ok=True)
        if (self.out / "results.json").exists():
            sys.exit(f"{self.out} already holds results; choose another --out")
        have_plots = matplotlib_available()

        servers.ensure_postgres_installed(self.pg_bin)
        if "postgres" in a.systems:
            self.bench_user = servers.ensure_bench_user()
        parent = Path(a.data_root).resolve() if a.data_root else None
        if parent:
            parent.mkdir(parents=True, exist_ok=True)
        self.data_root = servers.make_tempdir("steadybench-", parent)
        self.data_root.chmod(0o711)  # PostgreSQL runs as an unprivileged user when we are root

        machine = report.machine_info(self.data_root)
        others = report.other_database_processes()
        warnings = []
        if others:
            warnings.append("other database servers are running on this machine and may disturb the "
                            "measurements: " + "; ".join(others))
        if machine["loadavg_at_start"][0] > 0.5 * self.nproc:
            warnings.append(f"the machine is busy (load average {machine['loadavg_at_start'][0]:.2f} "
                            f"on {self.nproc} CPUs)")
        if machine["data_filesystem"].get("type") in ("tmpfs", "ramfs"):
            warnings.append("the data directories are on tmpfs: fsync costs nothing there; use --data-root")
        for w in warnings:
            warn(w)

        software = {"pgbench": {"version": tool_version([str(self.pg_bin / "pgbench"), "--version"]),
                                "binary": str(self.pg_bin / "pgbench")}}
        if "postgres" in a.systems:
            software["postgres"] = {"binary": str(self.pg_bin / "postgres"),
                                    "version_output": tool_version([str(self.pg_bin / "postgres"), "--version"]),
                                    "run_as_user": self.bench_user.pw_name if self.bench_user else None}
        if "steadydb" in a.systems:
            _, self.steadydb_copy, info = servers.resolve_steadydb_binary(a.steadydb_bin, REPO_ROOT, self.data_root)
            info["note"] = "the binary was copied before the first run, so a rebuild during the benchmark has no effect"
            software["steadydb"] = info
        try:
            import matplotlib
            software["matplotlib"] = matplotlib.__version__
        except ImportError:
            software["matplotlib"] = None

        self.checkpoint_at = sorted(t for t in a.checkpoint_at if t < a.duration)
        dropped = [t for t in a.checkpoint_at if t >= a.duration]
        if dropped:
            warn(f"--checkpoint-at {','.join(map(str, dropped))}: not within the {a.duration} s runs; ignored")

        threads_rule = (f"min(clients, {a.threads})" if a.threads else f"min(clients, 2 * nproc = {2 * self.nproc})")
        results = {
            "schema_version": 1,
            "started_at": started.isoformat(timespec="seconds"),
            "finished_at": None,
            "command": shlex.join([sys.executable] + sys.argv),
            "options": {"preset": a.preset, "workloads": a.workloads, "clients": a.clients, "duration": a.duration,
                        "scale": a.scale, "update_pk_rows": a.update_pk_rows, "shared_buffers": a.shared_buffers,
                        "systems": a.systems, "transport": a.transport, "tls": a.tls, "role": a.role, "threads_rule": threads_rule, "checkpoint_at": self.checkpoint_at,
                        "sampling_rate": a.sampling_rate, "extra_steadydb_conf": dict(a.extra_steadydb_conf),
                        "extra_postgres_conf": dict(a.extra_postgres_conf), "server_cpus": a.server_cpus,
                        "cpu_sets": {n: {"server": servers.cpu_list_text(srv), "clients": servers.cpu_list_text(cli)}
                                     for n, (srv, cli) in self.cpu_sets.items()}},
            "method": {
                "fresh_server_per_run": True,
                "order": "for each workload, for each client count (and each --server-cpus value), the systems one "
                         "after the other",
                "post_setup_checkpoint": "CHECKPOINT after loading, before pgbench starts",
                "pgbench": "-M prepared -n (no vacuum), -P 1 --progress-timestamp, --log",
                "tps": "pgbench summary 'tps = ... (without initial connection time)'",
                "latency_percentiles": "nearest-rank, from the per-transaction log (sampled when sampling_rate < 1)",
                "wal_series": "select wal_bytes, wal_fpi, wal_records from pg_stat_wal once per second on its own "
                              "connection while pgbench runs, and once more after it exited; t_s is seconds since "
                              "pgbench was launched, the same base as the progress series' t",
                "checkpoint_dip": dip.DEFINITIONS,
                "tps_cv": steadiness.DEFINITION,
                "stages": stages.DEFINITIONS,
                "server_cpus": "with --server-cpus N: the server (all its processes) runs under taskset on the first N "
                               "CPUs this process may use, pgbench -i, psql and the measured pgbench on the others; "
                               "the harness's samplers and the CPU probe are not pinned",
            },
            "settings": self.settings,
            "machine": machine,
            "warnings": warnings,
            "software": software,
            "workload_info": {w: {"description": WORKLOADS[w].description, "script": WORKLOADS[w].script,
                                  "tables_grow": WORKLOADS[w].tables_grow} for w in a.workloads},
            "runs": [],
        }
        report.write_results(self.out, results)
        if a.preset:
            log(f"preset {a.preset}: workloads {','.join(a.workloads)}, clients {','.join(map(str, a.clients))}, "
                f"{a.duration} s, CHECKPOINT at {','.join(f'{t:g}' for t in self.checkpoint_at) or '-'} s, "
                f"update_pk rows {a.update_pk_rows}, systems {','.join(a.systems)}")
        log(f"results go to {self.out}")
        rows = report.table_rows(results["options"])
        total = len(a.workloads) * len(rows)
        n = 0
        interrupted = False
        try:
            for wname in a.workloads:
                script = prepare_script(WORKLOADS[wname], self.out / "scripts", a.update_pk_rows)
                results["workload_info"][wname]["script_used"] = str(script) if script else "builtin tpcb-like"
                for clients, server_cpus in rows:
                    n += 1
                    pinning = ""
                    if server_cpus is not None:
                        srv, cli = self.cpu_sets[server_cpus]
                        pinning = (f", server on CPUs {servers.cpu_list_text(srv)}, "
                                   f"pgbench on {servers.cpu_list_text(cli)}")
                    log(f"[{n}/{total}] {wname}, {clients} client{'s' if clients != 1 else ''}, "
                        f"{self.threads(clients)} pgbench thread{'s' if self.threads(clients) != 1 else ''}"
                        + pinning)
                    for system in a.systems:
                        self.run_one(system, wname, clients, script, results, server_cpus)
                        report.write_results(self.out, results)
                print()
                print(report.workload_table(wname, rows, a.systems, results["runs"]), flush=True)
                print()
                for tables in (report.checkpoint_dip_tables(wname, rows, a.systems, results["runs"]),
                               report.stage_tables(wname, rows, a.systems, results["runs"])):
                    if tables:
                        print(tables + "\n", flush=True)
                if have_plots:
                    try:
                        png = report.plot_workload(self.out, wname, rows, a.systems, results["runs"],
                                                  a.duration)
                        if png:
                            results["workload_info"][wname]["plot"] = str(png)
                    except Exception as e:  # a plot problem must not lose the numbers
                        warn(f"plotting {wname} failed: {e}")
        except KeyboardInterrupt:
            interrupted = True
            warn("interrupted; stopping servers and writing what was measured so far")
        finally:
            REGISTRY.cleanup()
            results["finished_at"] = None if interrupted else dt.datetime.now().astimezone().isoformat(timespec="seconds")
            results["problems"] = self.problems
            report.write_results(self.out, results)

        print("\n" + report.markdown_report(results))
        written = [self.out / "results.json", self.out / "results.md"] + \
            [Path(i["plot"]) for i in results["workload_info"].values() if i.get("plot")]
        log("\nwritten: " + ", ".join(map(str, written)))
        if self.problems:
            print("\nProblems:", file=sys.stderr)
            for p in self.problems:
                print(f"  - {p}", file=sys.stderr)
        if interrupted:
            return 130
        return 1 if self.problems else 0


def make_certificate(where: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (the clients require TLS but
    do not verify the certificate, as sslmode=require does)."""
    cert, key = where / "server.crt", where / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
                    "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    return cert, key


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    servers.install_signal_handlers()
    try:
        return Bench(a).run()
    except KeyboardInterrupt:
        warn("interrupted")
        return 130
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        REGISTRY.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
