"""Running the real pgbench binary and parsing its report."""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass

from conftest import Server, find_pg_tool


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


@dataclass
class PgbenchResult:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    processed: int | None
    failed: int | None
    tps: float | None

    def describe(self) -> str:
        return (
            f"pgbench exit code {self.returncode} after {self.elapsed:.1f} s\n"
            f"--- stdout\n{self.stdout}\n--- stderr (last 60 lines)\n"
            + "\n".join(self.stderr.splitlines()[-60:])
        )

    def error_lines(self) -> list[str]:
        return [
            line
            for line in (self.stdout + "\n" + self.stderr).splitlines()
            if re.search(r"\berror\b|\bERROR\b|aborted|FATAL", line)
        ]


def parse_report(stdout: str) -> tuple[int | None, int | None, float | None]:
    processed = failed = None
    tps = None
    m = re.search(r"^number of transactions actually processed: (\d+)", stdout, re.M)
    if m:
        processed = int(m.group(1))
    m = re.search(r"^number of failed transactions: (\d+)", stdout, re.M)
    if m:
        failed = int(m.group(1))
    m = re.search(r"^tps = ([0-9.]+)", stdout, re.M)
    if m:
        tps = float(m.group(1))
    return processed, failed, tps


def run_pgbench(server: Server, *args: str, timeout: float) -> PgbenchResult:
    cmd = [
        find_pg_tool("pgbench"),
        "-h",
        server.host,
        "-p",
        str(server.port),
        "-U",
        server.user,
        *args,
        server.dbname,
    ]
    start = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=server.client_env())
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise AssertionError(
            f"pgbench {' '.join(args)} did not finish within {timeout} s\n{out}\n{err[-4000:]}"
        ) from None
    elapsed = time.monotonic() - start
    processed, failed, tps = parse_report(res.stdout)
    result = PgbenchResult(res.returncode, res.stdout, res.stderr, elapsed, processed, failed, tps)
    print(f"\n$ pgbench {' '.join(args)}  ({elapsed:.1f} s)\n{res.stdout}")
    return result


def assert_clean_run(result: PgbenchResult) -> None:
    """Exit code 0, transactions processed, zero failed transactions, no error output."""
    assert result.returncode == 0, result.describe()
    assert result.processed is not None, "no 'transactions actually processed' line\n" + result.describe()
    assert result.processed > 0, result.describe()
    if result.failed is not None:
        assert result.failed == 0, result.describe()
    assert result.error_lines() == [], result.describe()
