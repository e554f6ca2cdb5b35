"""Machine information, Markdown tables, results.json/results.md and plots."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

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


def workload_table(workload: str, clients_list: list[int], systems: list[str], runs: list[dict]) -> str:
    index = {(r["clients"], r["system"]): r for r in runs if r["workload"] == workload}
    head = ["clients"] + [f"{LABELS[s]} tps" for s in systems]
    both = "postgres" in systems and "steadydb" in systems
    if both:
        head.append("ratio SteadyDB/PostgreSQL")
    for s in systems:
        head += [f"{SHORT[s]} p50 ms", f"{SHORT[s]} p99 ms"]
    head += [f"{SHORT[s]} failed" for s in systems]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for c in clients_list:
        by_sys = {s: index.get((c, s)) for s in systems}
        if not any(by_sys.values()):
            continue
        row = [str(c)]
        for s in systems:
            r = by_sys[s]
            if r is None:
                row.append("-")
            elif r.get("status") != "ok" and r.get("tps") is None:
                row.append("ERROR")
            else:
                row.append(_fmt(r.get("tps")) + ("" if r.get("status") == "ok" else " (ERROR)"))
        if both:
            q = ratio(by_sys)
            row.append(f"{q:.2f}" if q is not None else "-")
        for s in systems:
            r = by_sys[s] or {}
            row += [_fmt(r.get("p50_ms"), 3), _fmt(r.get("p99_ms"), 3)]
        for s in systems:
            r = by_sys[s] or {}
            row.append(_fmt(r.get("failed_transactions")))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


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
                 + (f", CHECKPOINT at {','.join(map(str, o['checkpoint_at']))} s" if o["checkpoint_at"] else ""))
    parts.append("- every (workload, clients, system) run uses a freshly created server and data directory")
    parts.append("")
    parts.append("tps: pgbench's \"without initial connection time\"; p50/p99: from pgbench's per-transaction "
                 "log (ms); ratio > 1 means SteadyDB is faster.")
    parts.append("")
    for w in o["workloads"]:
        if not any(r["workload"] == w for r in results["runs"]):
            continue
        parts.append(workload_heading(w, results.get("workload_info", {}).get(w, {})))
        parts.append(workload_table(w, o["clients"], o["systems"], results["runs"]))
        sampled = [r for r in results["runs"] if r["workload"] == w and r.get("sampling_rate", 1) < 1]
        if sampled:
            parts.append("")
            parts.append("Latency percentiles of " + ", ".join(
                f"{LABELS[r['system']]} c={r['clients']} (rate {r['sampling_rate']:g})" for r in sampled)
                + " come from a random sample of transactions (pgbench --sampling-rate).")
        parts.append("")
    errors = [r for r in results["runs"] if r.get("status") != "ok"]
    if errors:
        parts.append("## Errors\n")
        for r in errors:
            first = (r.get("error") or "?").splitlines()[0]
            parts.append(f"- {r['workload']} c={r['clients']} {LABELS[r['system']]}: {first} "
                         f"(details in results.json and {Path(r['server_log']).name})")
        parts.append("")
    return "\n".join(parts)


def write_results(out_dir: Path, results: dict) -> None:
    tmp = out_dir / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=str) + "\n")
    tmp.replace(out_dir / "results.json")
    (out_dir / "results.md").write_text(markdown_report(results) + "\n")


# ---------------------------------------------------------------- plots

def plot_workload(out_dir: Path, workload: str, clients_list: list[int], systems: list[str],
                  runs: list[dict], duration: float) -> Path | None:
    """tps (left) and average latency (right) over time, one row per client count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [c for c in clients_list
            if any(r["workload"] == workload and r["clients"] == c and r.get("progress") for r in runs)]
    if not rows:
        return None
    fig, axes = plt.subplots(len(rows), 2, figsize=(13, 3.2 * len(rows) + 0.8), squeeze=False)
    for i, c in enumerate(rows):
        ax_tps, ax_lat = axes[i]
        for s in systems:
            r = next((r for r in runs if r["workload"] == workload and r["clients"] == c and r["system"] == s), None)
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
            for k, cp in enumerate(r.get("checkpoints", [])):
                for ax in (ax_tps, ax_lat):
                    ax.axvline(cp["issued_at_s"], color=COLORS[s], ls="--", lw=1,
                               label=(f"{LABELS[s]} CHECKPOINT" if k == 0 and ax is ax_tps else None))
                    if cp.get("duration_s", 0) > 0.05:
                        ax.axvspan(cp["issued_at_s"], cp["issued_at_s"] + cp["duration_s"],
                                   color=COLORS[s], alpha=0.12)
        ax_tps.set_title(f"{workload}, {c} client{'s' if c != 1 else ''}: tps")
        ax_lat.set_title(f"{workload}, {c} client{'s' if c != 1 else ''}: average latency")
        ax_tps.set_ylabel("transactions / s")
        ax_lat.set_ylabel("ms")
        ax_tps.set_ylim(bottom=0)
        ax_lat.set_ylim(bottom=0)
        for ax in (ax_tps, ax_lat):
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
