"""Machine information, Markdown tables, results.json/results.md and plots."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

from . import dip, stages

LABELS = {"postgres": "PostgreSQL", "steadydb": "SteadyDB"}
SHORT = {"postgres": "PG", "steadydb": "SDB"}
COLORS = {"postgres": "tab:blue", "steadydb": "tab:orange"}


# ---------------------------------------------------------------- machine

def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def filesystem_of(path: Path) -> dict:
    """Mount point, device and type of the filesystem holding `path` (from /proc/mounts)."""
    best = None
    p = str(path.resolve())
    for line in _read("/proc/mounts").splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (p == mnt or p.startswith(mnt.rstrip("/") + "/")) and (best is None or len(mnt) > len(best[1])):
            best = (parts[0], mnt, parts[2])
    if best is None:
        return {}
    return {"device": best[0], "mount_point": best[1], "type": best[2]}


def machine_info(data_root: Path) -> dict:
    mem_kb = None
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    cpu_model = None
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    os_name = None
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip('"')
    try:
        uname_a = subprocess.run(["uname", "-a"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        uname_a = None
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_total_bytes": mem_kb * 1024 if mem_kb else None,
        "kernel": platform.release(),
        "uname": uname_a,
        "os": os_name,
        "python": platform.python_version(),
        "loadavg_at_start": list(os.getloadavg()),
        "data_filesystem": filesystem_of(data_root),
        "data_root": str(data_root),
    }


def other_database_processes() -> list[str]:
    """Other PostgreSQL/SteadyDB servers running on the machine (they disturb measurements)."""
    found = []
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            cmdline = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not cmdline or not cmdline[0]:
            continue
        exe = os.path.basename(cmdline[0].decode(errors="replace"))
        if exe in ("postgres", "postmaster", "steadydb"):  # PostgreSQL children rename themselves "postgres: ..."
            found.append(f"pid {d.name}: " + " ".join(c.decode(errors="replace") for c in cmdline if c))
    return found


# ---------------------------------------------------------------- tables

def _fmt(v, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def ratio(runs_by_system: dict) -> float | None:
    pg, sd = runs_by_system.get("postgres"), runs_by_system.get("steadydb")
    if not pg or not sd or pg.get("status") != "ok" or sd.get("status") != "ok":
        return None
    if not pg.get("tps") or sd.get("tps") is None:
        return None
    return sd["tps"] / pg["tps"]


def table_rows(options: dict) -> list[tuple[int, int | None]]:
    """The (clients, server CPUs) pairs of the tables, in run order; server CPUs is None
    without --server-cpus."""
    return [(c, n) for c in options["clients"] for n in (options.get("server_cpus") or [None])]


def find_run(runs: list[dict], workload: str, clients: int, system: str, server_cpus: int | None = None) -> dict | None:
    return next((r for r in runs if r["workload"] == workload and r["clients"] == clients and r["system"] == system
                 and r.get("server_cpus") == server_cpus), None)


def row_label(clients: int, server_cpus: int | None) -> str:
    text = f"{clients} client{'s' if clients != 1 else ''}"
    return text if server_cpus is None else f"{text}, {server_cpus} server CPU{'s' if server_cpus != 1 else ''}"


def cv_ratio(runs_by_system: dict) -> float | None:
    pg, sd = runs_by_system.get("postgres") or {}, runs_by_system.get("steadydb") or {}
    if not pg.get("tps_cv") or sd.get("tps_cv") is None:
        return None
    return sd["tps_cv"] / pg["tps_cv"]


def workload_table(workload: str, rows: list[tuple[int, int | None]], systems: list[str], runs: list[dict]) -> str:
    with_cpus = any(n is not None for _, n in rows)
    head = ["clients"] + (["server CPUs"] if with_cpus else [])
    for s in systems:
        head += [f"{LABELS[s]} tps", f"{SHORT[s]} tps CV"]
    both = "postgres" in systems and "steadydb" in systems
    if both:
        head += ["ratio SteadyDB/PostgreSQL", "CV SteadyDB/PostgreSQL"]
    for s in systems:
        head += [f"{SHORT[s]} p50 ms", f"{SHORT[s]} p99 ms"]
    head += [f"{SHORT[s]} failed" for s in systems]
    head += [f"{SHORT[s]} CPU speed" for s in systems]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for c, n in rows:
        by_sys = {s: find_run(runs, workload, c, s, n) for s in systems}
        if not any(by_sys.values()):
            continue
        row = [str(c)] + ([str(n)] if with_cpus else [])
        for s in systems:
            r = by_sys[s]
            if r is None:
                row.append("-")
            elif r.get("status") != "ok" and r.get("tps") is None:
                row.append("ERROR")
            else:
                row.append(_fmt(r.get("tps")) + ("" if r.get("status") == "ok" else " (ERROR)"))
            row.append(_fmt((r or {}).get("tps_cv"), 3))
        if both:
            q = ratio(by_sys)
            row.append(f"{q:.2f}" if q is not None else "-")
            q = cv_ratio(by_sys)
            row.append(f"{q:.2f}" if q is not None else "-")
        for s in systems:
            r = by_sys[s] or {}
            row += [_fmt(r.get("p50_ms"), 3), _fmt(r.get("p99_ms"), 3)]
        for s in systems:
            r = by_sys[s] or {}
            row.append(_fmt(r.get("failed_transactions")))
        for s in systems:
            row.append(_fmt((by_sys[s] or {}).get("cpu_speed_median")))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _seconds_label(v: float | None) -> str:
    return "?" if v is None else f"{v:g}"


def checkpoint_dip_table(workload: str, clients: int, systems: list[str], runs: list[dict],
                         server_cpus: int | None = None) -> str | None:
    """Both systems side by side: the checkpoint-dip figures of one (workload, clients)."""
    dips = {}
    for s in systems:
        dips[s] = (find_run(runs, workload, clients, s, server_cpus) or {}).get("checkpoint_dip")
    present = [d for d in dips.values() if d]
    if not present:
        return None
    with_target = "steadydb" in systems
    head = [""] + [LABELS[s] for s in systems] + (["SteadyDB target"] if with_target else [])
    lines = [f"checkpoint dip: {workload}, {row_label(clients, server_cpus)}", "",
             "| " + " | ".join(head) + " |",
             "|---|" + "|".join("---:" for _ in systems) + ("|---|" if with_target else "|")]

    def add_row(label: str, cell, target: str = "") -> None:
        cells = [cell(dips[s]) if dips[s] else "-" for s in systems]
        lines.append("| " + " | ".join([label] + cells + ([target] if with_target else [])) + " |")

    def checkpoint(d: dict, k: int) -> dict:
        return d["checkpoints"][k] if k < len(d["checkpoints"]) else {}

    def target(k: int, meets, text: str) -> str:
        d = dips.get("steadydb")
        verdict = meets(checkpoint(d, k)) if d else None
        return text if verdict is None else f"{text}: {'met' if verdict else 'MISSED'}"

    add_row("median tps, whole run", lambda d: _fmt(d.get("median_tps")))
    add_row("WAL bytes/txn, steady state", lambda d: _fmt(d.get("wal_bytes_per_txn_steady")))
    add_row("WAL bytes/txn, whole run", lambda d: _fmt(d.get("wal_bytes_per_txn_run")))
    add_row("wal_fpi, whole run", lambda d: _fmt(d.get("wal_fpi_run")))
    min_window_s, wal_window_s = present[0]["min_tps_window_s"], present[0]["wal_window_s"]
    has_cpu_time = any(d.get("cpu_busy_median") is not None for d in present)
    if any(d.get("control_min_tps") is not None for d in present):
        add_row(f"no CHECKPOINT (the {min_window_s:g} s before the first): min tps",
                lambda d: "-" if d.get("control_min_tps") is None
                else f"{_fmt(d['control_min_tps'])} at {d['control_min_tps_at_s']:.0f} s")
        add_row(f"no CHECKPOINT (the {min_window_s:g} s before the first): min / median tps",
                lambda d: _fmt(d.get("control_min_to_median_tps_ratio"), 2))
        add_row("no CHECKPOINT: machine speed in that second / its median",
                lambda d: _fmt(d.get("control_cpu_speed_in_min_second"), 2))
        add_row("no CHECKPOINT: machine's slowest second / its median",
                lambda d: _fmt(d.get("control_cpu_speed_min"), 2))
        if has_cpu_time:
            add_row("no CHECKPOINT: CPU busy / idle / iowait in that second (run's median)",
                    lambda d: _cpu_time(d, d, "control_"))
    for k in range(max(len(d["checkpoints"]) for d in present)):
        first = next(checkpoint(d, k) for d in present if checkpoint(d, k))
        at = f"CHECKPOINT at {_seconds_label(first.get('requested_at_s'))} s"

        def took(d: dict, k=k) -> str:
            cp = checkpoint(d, k)
            return "ERROR" if cp.get("checkpoint_error") else _fmt(cp.get("checkpoint_duration_s"), 3)

        def min_tps(d: dict, k=k) -> str:
            cp = checkpoint(d, k)
            if cp.get("min_tps") is None:
                return "-"
            text = f"{_fmt(cp['min_tps'])} at {cp['min_tps_at_s']:.0f} s"
            if cp["min_tps_window_s"] < d["min_tps_window_s"] - 0.5:
                text += f" (window cut to {cp['min_tps_window_s']:.0f} s)"
            return text

        def field(key: str, digits: int, k=k):
            return lambda d: _fmt(checkpoint(d, k).get(key), digits)

        def after_to_before(d: dict, k=k) -> str:
            cp = checkpoint(d, k)
            verdict = dip.meets_after_to_before_target(cp)
            if verdict is None:
                return "-"
            return f"{cp['mean_tps_after_to_before']:.3f} ({'yes' if verdict else 'NO'})"

        def mean_window(key: str, k=k):
            def cell(d: dict) -> str:
                cp = checkpoint(d, k)
                if cp.get(key) is None:
                    return "-"
                window_s = cp[f"mean_tps_window_{key.rsplit('_', 1)[1]}_s"]
                cut = f" (window cut to {window_s:.1f} s)" if window_s < d["mean_tps_window_s"] - 0.5 else ""
                return _fmt(cp[key]) + cut
            return cell

        add_row(f"{at}: took s", took)
        mean_window_s = present[0].get("mean_tps_window_s", dip.MEAN_TPS_WINDOW_S)
        add_row(f"{at}: mean tps in {mean_window_s:g} s before", mean_window("mean_tps_before"))
        add_row(f"{at}: mean tps in {mean_window_s:g} s after", mean_window("mean_tps_after"))
        add_row(f"{at}: mean tps after / before (>= {dip.TARGET_AFTER_TO_BEFORE_TPS:.2f}?)", after_to_before,
                target(k, dip.meets_after_to_before_target, f">= {dip.TARGET_AFTER_TO_BEFORE_TPS:.2f}"))
        add_row(f"{at}: machine speed after / before", field("cpu_speed_after_to_before", 3))
        add_row(f"{at}: mean tps after / before, per machine speed", field("mean_tps_per_speed_after_to_before", 3))
        add_row(f"{at}: min tps in {min_window_s:g} s after", min_tps)
        add_row(f"{at}: min / median tps", field("min_to_median_tps_ratio", 2),
                target(k, dip.meets_tps_target, f">= {dip.TARGET_MIN_TO_MEDIAN_TPS:.2f}"))
        add_row(f"{at}: machine speed in that second / its median", field("cpu_speed_in_min_second", 2))
        add_row(f"{at}: machine's slowest second in {min_window_s:g} s after / its median",
                field("cpu_speed_min", 2))
        if has_cpu_time:
            add_row(f"{at}: CPU busy / idle / iowait in that second (run's median)",
                    lambda d, k=k: _cpu_time(checkpoint(d, k), d, ""))
        add_row(f"{at}: WAL bytes/txn in {wal_window_s:g} s after", field("wal_bytes_per_txn_after", 1))
        add_row(f"{at}: WAL bytes/txn after / steady", field("wal_bytes_per_txn_ratio", 3),
                target(k, dip.meets_wal_target, f"1 +- {dip.TARGET_WAL_RATIO_TOLERANCE:.2f}"))
        add_row(f"{at}: wal_fpi in {wal_window_s:g} s after", field("wal_fpi_after", 0))
    return "\n".join(lines)


def _cpu_time(rec: dict, run: dict, prefix: str) -> str:
    """"0.78 / 0.14 / 0.07 (0.77 / 0.15 / 0.08)": the shares in the lowest second, then the
    run's medians."""
    at = [rec.get(f"{prefix}{k}_in_min_second") for k in dip.CPU_SHARES]
    med = [run.get(f"{k}_median") for k in dip.CPU_SHARES]
    if any(v is None for v in at + med):
        return "-"
    return " / ".join(f"{v:.2f}" for v in at) + " (" + " / ".join(f"{v:.2f}" for v in med) + ")"


def checkpoint_dip_tables(workload: str, rows: list[tuple[int, int | None]], systems: list[str],
                          runs: list[dict]) -> str:
    tables = [checkpoint_dip_table(workload, c, systems, runs, n) for c, n in rows]
    return "\n\n".join(t for t in tables if t)


def lowest_ceiling_text(summary: dict) -> str:
    """"lowest stage ceiling 120,000 tps (wal_append)", or a dash without one."""
    if summary.get("lowest_ceiling_tps") is None:
        return "lowest stage ceiling -"
    return f"lowest stage ceiling {summary['lowest_ceiling_tps']:,.0f} tps ({summary['lowest_ceiling_stage']})"


def stage_table(run: dict) -> str | None:
    """The stages of one run (`stages.py`), lowest ceiling first."""
    summary = run.get("stages")
    if not summary:
        return None
    lines = [f"stages: {run['workload']}, {row_label(run['clients'], run.get('server_cpus'))}, "
             f"{LABELS[run['system']]}: {summary['tps']:,.1f} tps over the {summary['elapsed_s']:.1f} s sampled; "
             + lowest_ceiling_text(summary), "",
             "| stage | kind | partitions | busy % | wait % | waits/txn | acquisitions/txn | ceiling tps "
             "| ceiling / tps |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    idle = [st["stage"] for st in summary["stages"] if not any(st[k] for k in stages.COUNTERS)]
    for st in summary["stages"]:
        if st["stage"] in idle:
            continue
        kind = stages.DEVICE_NOTE if st["kind"] == stages.DEVICE_KIND else st["kind"]
        headroom = st["ceiling_tps"] / summary["tps"] if st["ceiling_tps"] and summary["tps"] else None
        lines.append("| " + " | ".join([
            st["stage"], kind, str(st["partitions"]), _fmt(st["busy_pct"]), _fmt(st["wait_pct"]),
            _fmt(st["waits_per_txn"], 3), _fmt(st["acquisitions_per_txn"], 2),
            "-" if st["ceiling_tps"] is None else f"{st['ceiling_tps']:,.0f}",
            _fmt(headroom, 2)]) + " |")
    if idle:
        lines += ["", "Not entered during the run: " + ", ".join(idle) + "."]
    return "\n".join(lines)


def stage_tables(workload: str, rows: list[tuple[int, int | None]], systems: list[str], runs: list[dict]) -> str:
    tables = [stage_table(r) for c, n in rows for s in systems
              if (r := find_run(runs, workload, c, s, n)) is not None]
    return "\n\n".join(t for t in tables if t)


STAGES_NOTE = (
    "Stages: SteadyDB's steadydb_stat_stages, sampled once per second, over the samples within pgbench's "
    "-P 1 seconds. busy % = busy time / wall time / partitions; wait % = time spent waiting to enter / wall "
    "time / partitions (above 100 when several wait at once); ceiling = transactions / (busy seconds / "
    "partitions): the tps at which the stage would be busy all the time; ceiling / tps: how far the run was "
    "from it. A device stage (the log flush) carries whole groups of commits, so its busy time per "
    "transaction is not a serial-CPU limit (bench/harness/stages.py).")


def scaling_report(results: dict) -> str | None:
    """Per workload and clients, each system's tps per server-CPU count and its ratio to the
    tps on the smallest count (with two or more --server-cpus values)."""
    o = results["options"]
    counts = sorted(o.get("server_cpus") or [])
    if len(counts) < 2:
        return None
    base = counts[0]
    head = ["workload", "clients", "system"] + [f"tps, {n} server CPUs" for n in counts] + \
           [f"{n} / {base} CPUs" for n in counts[1:]]
    lines = ["## Scaling with server CPUs", "",
             f"Server pinned to CPUs 0..N-1, pgbench to the rest; ratio: tps on N CPUs / tps on {base}.", "",
             "| " + " | ".join(head) + " |", "|---|---:|---|" + "|".join("---:" for _ in head[3:]) + "|"]
    for w in o["workloads"]:
        for c in o["clients"]:
            for s in o["systems"]:
                by_n = {n: find_run(results["runs"], w, c, s, n) for n in counts}
                if not any(by_n.values()):
                    continue
                tps = {n: r.get("tps") if r and r.get("status") == "ok" else None for n, r in by_n.items()}
                row = [w, str(c), LABELS[s]] + [_fmt(tps[n]) if tps[n] is not None else "-" for n in counts]
                row += [f"{tps[n] / tps[base]:.2f}" if tps[n] is not None and tps[base] else "-" for n in counts[1:]]
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


CHECKPOINT_DIP_NOTE = (
    f"Checkpoint dip: min tps is the lowest pgbench -P 1 second in the {dip.MIN_TPS_WINDOW_S:g} s after the "
    f"CHECKPOINT was issued, median over the whole run; mean tps before / after: the -P 1 rates "
    f"integrated over the {dip.MEAN_TPS_WINDOW_S:g} s before and after it was issued, \"yes\" when after / "
    f"before >= {dip.TARGET_AFTER_TO_BEFORE_TPS:.2f}; the \"no CHECKPOINT\" rows give the same lowest "
    f"second for the {dip.MIN_TPS_WINDOW_S:g} s before the first CHECKPOINT: the noise floor of the same run. "
    f"WAL bytes/txn from pg_stat_wal sampled once per second, "
    f"in the {dip.WAL_WINDOW_S:g} s after the CHECKPOINT vs. the rest of the run (steady state); "
    "PostgreSQL publishes backends' WAL statistics up to about a second late. \"took\" is how long the "
    "CHECKPOINT command took. The SteadyDB targets are informational. Machine speed: the CPU probe's work "
    "per CPU-second in that second (mean over CPUs), over its median for the run "
    "(bench/harness/cpu_probe.py); it shows how much of a slow second was the machine's own.")


def workload_heading(workload: str, info: dict) -> str:
    return f"### {workload}\n\n{info.get('description', '')}\n"


def markdown_report(results: dict) -> str:
    o = results["options"]
    sw = results.get("software", {})
    m = results["machine"]
    parts = ["# SteadyDB vs PostgreSQL benchmark", ""]
    parts.append(f"- started: {results['started_at']}" + (f", finished: {results['finished_at']}"
                                                          if results.get("finished_at") else " (incomplete)"))
    parts.append(f"- machine: {m.get('nproc')} CPUs ({m.get('cpu_model')}), "
                 f"{(m.get('memory_total_bytes') or 0) / 2**30:.1f} GiB RAM, kernel {m.get('kernel')}, "
                 f"data on {m.get('data_filesystem', {}).get('type', '?')}")
    for s in o["systems"]:
        v = sw.get(s, {}).get("server_version")
        parts.append(f"- {LABELS[s]}: {v or '?'}")
    parts.append(f"- {sw.get('pgbench', {}).get('version', 'pgbench ?')}")
    parts.append(f"- duration {o['duration']} s per run, clients {','.join(map(str, o['clients']))}, "
                 f"threads {o['threads_rule']}, scale {o['scale']}, update_pk rows {o['update_pk_rows']}, "
                 f"shared_buffers {o['shared_buffers']}, fsync=on, synchronous_commit=on"
                 + (f", CHECKPOINT at {','.join(f'{t:g}' for t in o['checkpoint_at'])} s" if o["checkpoint_at"] else ""))
    transport = o.get("transport", "tcp")
    parts.append("- clients connect through " + ("each server's Unix-domain socket" if transport == "unix"
                                                 else "TCP to 127.0.0.1")
                 + (", over TLS (sslmode=require; ssl = on in both servers)" if o.get("tls") else "")
                 + (f", as role {o['role']} (not a superuser: privileges checked)" if o.get("role") else ""))
    for s in o["systems"]:
        extra = o.get(f"extra_{s}_conf") or {}
        if extra:
            parts.append(f"- extra settings for {LABELS[s]} (overriding the above): "
                         + ", ".join(f"{k}={v}" for k, v in extra.items()))
    for n, sets in (o.get("cpu_sets") or {}).items():
        parts.append(f"- {n} server CPU{'s' if int(n) != 1 else ''}: servers pinned to CPUs {sets['server']}, "
                     f"pgbench and psql to {sets['clients']} (taskset)")
    if o.get("preset"):
        parts.append(f"- preset: {o['preset']}")
    parts.append("- every (workload, clients, system) run uses a freshly created server and data directory")
    parts.append("")
    parts.append("tps: pgbench's \"without initial connection time\"; p50/p99: from pgbench's per-transaction "
                 "log (ms); ratio > 1 means SteadyDB is faster. CPU speed: the machine's own speed during "
                 "the run, the median over its seconds of a fixed piece of work per CPU-second (millions of "
                 "loop iterations, bench/harness/cpu_probe.py); on a shared machine it differs between runs. "
                 "tps CV: the coefficient of variation (stdev / mean) of the one-second tps, without the first "
                 "and last second; lower is steadier, and CV SteadyDB/PostgreSQL < 1 means SteadyDB was steadier.")
    parts.append("")
    rows = table_rows(o)
    for w in o["workloads"]:
        if not any(r["workload"] == w for r in results["runs"]):
            continue
        parts.append(workload_heading(w, results.get("workload_info", {}).get(w, {})))
        parts.append(workload_table(w, rows, o["systems"], results["runs"]))
        sampled = [r for r in results["runs"] if r["workload"] == w and r.get("sampling_rate", 1) < 1]
        if sampled:
            parts.append("")
            parts.append("Latency percentiles of " + ", ".join(
                f"{LABELS[r['system']]} c={r['clients']} (rate {r['sampling_rate']:g})" for r in sampled)
                + " come from a random sample of transactions (pgbench --sampling-rate).")
        parts.append("")
        for tables, note in ((checkpoint_dip_tables(w, rows, o["systems"], results["runs"]), CHECKPOINT_DIP_NOTE),
                             (stage_tables(w, rows, o["systems"], results["runs"]), STAGES_NOTE)):
            if tables:
                parts.extend([tables, "", note, ""])
    if results.get("stage_view_missing"):
        parts.append(f"Stages: not sampled, the SteadyDB binary has no {stages.VIEW} "
                     f"({results['stage_view_missing']}).")
        parts.append("")
    scaling = scaling_report(results)
    if scaling:
        parts.append(scaling)
        parts.append("")
    errors = [r for r in results["runs"] if r.get("status") != "ok"]
    if errors:
        parts.append("## Errors\n")
        for r in errors:
            first = (r.get("error") or "?").splitlines()[0]
            cpus = f" {r['server_cpus']} server CPUs" if r.get("server_cpus") else ""
            parts.append(f"- {r['workload']} c={r['clients']}{cpus} {LABELS[r['system']]}: {first} "
                         f"(details in results.json and {Path(r['server_log']).name})")
        parts.append("")
    return "\n".join(parts)


def write_results(out_dir: Path, results: dict) -> None:
    tmp = out_dir / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=str) + "\n")
    tmp.replace(out_dir / "results.json")
    (out_dir / "results.md").write_text(markdown_report(results) + "\n")


# ---------------------------------------------------------------- plots

def plot_workload(out_dir: Path, workload: str, table_rows: list[tuple[int, int | None]], systems: list[str],
                  runs: list[dict], duration: float) -> Path | None:
    """tps, average latency and (when pg_stat_wal was sampled) WAL bytes per second over time,
    one row per client count (and server CPU count)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(c, n) for c, n in table_rows
            if any((find_run(runs, workload, c, s, n) or {}).get("progress") for s in systems)]
    if not rows:
        return None
    with_wal = any(r.get("wal_series") for r in runs if r["workload"] == workload)
    with_cpu = any(p.get("cpu_speed") is not None for r in runs if r["workload"] == workload
                   for p in r.get("progress") or [])
    ncols = 2 + with_wal + with_cpu
    fig, axes = plt.subplots(len(rows), ncols, figsize=(6.5 * ncols, 3.2 * len(rows) + 0.8), squeeze=False)
    for i, (c, n) in enumerate(rows):
        title = f"{workload}, {row_label(c, n)}"
        ax_tps, ax_lat = axes[i][:2]
        ax_wal = axes[i][2] if with_wal else None
        ax_cpu = axes[i][ncols - 1] if with_cpu else None
        panels = [ax for ax in (ax_tps, ax_lat, ax_wal, ax_cpu) if ax is not None]
        for s in systems:
            r = find_run(runs, workload, c, s, n)
            if not r or not r.get("progress"):
                continue
            # each progress value covers the second (-P 1) that ends at its timestamp: draw steps
            prog = r["progress"]
            t = [max(0.0, p["t"] - 1.0) for p in prog] + [prog[-1]["t"]]
            label = f"{LABELS[s]} ({r['tps']:,.0f} tps)" if r.get("tps") is not None else LABELS[s]
            ax_tps.step(t, [p["tps"] for p in prog] + [prog[-1]["tps"]], where="post", color=COLORS[s],
                        label=label, lw=1.4)
            ax_lat.step(t, [p["lat_ms"] for p in prog] + [prog[-1]["lat_ms"]], where="post", color=COLORS[s],
                        label=LABELS[s], lw=1.4)
            wal = r.get("wal_series") or []
            if ax_wal is not None and len(wal) > 1:
                # each rate covers the time between two samples
                rates = [(b["wal_bytes"] - a["wal_bytes"]) / (b["t_s"] - a["t_s"]) / 2**20
                         for a, b in zip(wal, wal[1:])]
                ax_wal.step([w["t_s"] for w in wal], rates + [rates[-1]], where="post", color=COLORS[s],
                            label=LABELS[s], lw=1.4)
            speeds = [p.get("cpu_speed") for p in prog]
            if ax_cpu is not None and any(v is not None for v in speeds):
                ys = [float("nan") if v is None else v for v in speeds]
                ax_cpu.step(t, ys + [ys[-1]], where="post", color=COLORS[s],
                            label=f"during {LABELS[s]}'s run", lw=1.4)
            for k, cp in enumerate(r.get("checkpoints", [])):
                for ax in panels:
                    ax.axvline(cp["issued_at_s"], color=COLORS[s], ls="--", lw=1,
                               label=(f"{LABELS[s]} CHECKPOINT" if k == 0 and ax is ax_tps else None))
                    if cp.get("duration_s", 0) > 0.05:
                        ax.axvspan(cp["issued_at_s"], cp["issued_at_s"] + cp["duration_s"],
                                   color=COLORS[s], alpha=0.12)
        ax_tps.set_title(f"{title}: tps")
        ax_lat.set_title(f"{title}: average latency")
        ax_tps.set_ylabel("transactions / s")
        ax_lat.set_ylabel("ms")
        if ax_cpu is not None:
            ax_cpu.set_title(f"{title}: the machine's speed (CPU probe)")
            ax_cpu.set_ylabel("M iterations / CPU-second")
            if ax_cpu.get_legend_handles_labels()[0]:
                ax_cpu.legend(loc="lower right", fontsize=8)
        if ax_wal is not None:
            ax_wal.set_title(f"{title}: WAL written (pg_stat_wal)")
            ax_wal.set_ylabel("MiB / s")
        for ax in panels:
            ax.set_ylim(bottom=0)
            ax.set_xlim(left=0, right=max(duration, ax.get_xlim()[1]))
            ax.set_xlabel("seconds since pgbench start")
            ax.grid(alpha=0.3)
        if ax_tps.get_legend_handles_labels()[0]:
            ax_tps.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{workload}: per-second progress (pgbench -P 1); dashed lines: CHECKPOINT issued, "
                 "shaded: until it returned" if any(r.get("checkpoints") for r in runs if r["workload"] == workload)
                 else f"{workload}: per-second progress (pgbench -P 1)")
    fig.tight_layout()
    path = out_dir / f"{workload}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
