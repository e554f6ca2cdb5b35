"""Starting and stopping throwaway PostgreSQL 15 and SteadyDB servers.

Every server is started in its own session (process group) and registered in
`REGISTRY`, which stops all of them and removes their directories on normal exit,
on errors, on Ctrl-C and on SIGTERM/SIGHUP (see `install_signal_handlers`).
"""

from __future__ import annotations

import atexit
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import pgwire

PG_BIN_DEFAULT = Path("/usr/lib/postgresql/15/bin")
BENCH_USER = "steadybench"


def log(msg: str) -> None:
    print(msg, flush=True)


def warn(msg: str) -> None:
    print(f"WARNING: {msg}", file=sys.stderr, flush=True)


# What clients (pgbench, psql) ask for: "require" when the run measures TLS (--tls).
CLIENT_SSLMODE = "disable"


def clean_env() -> dict[str, str]:
    """The environment for clients and servers: no PG* variables from the caller's shell
    (PGOPTIONS, PGHOST, ... would change what is measured)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGSSLMODE"] = CLIENT_SSLMODE
    env["LC_ALL"] = "C"
    return env


def cpu_list_text(cpus: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8" (the list syntax of taskset -c and /proc/*/status)."""
    runs: list[list[int]] = []
    for c in sorted(cpus):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def pinned(cmd: list[str], cpus: list[int] | None) -> list[str]:
    """`cmd` run on `cpus` only (through taskset; children inherit it), or `cmd` unchanged."""
    if not cpus:
        return cmd
    return ["taskset", "-c", cpu_list_text(cpus)] + cmd


def split_cpus(server_cpus: int, allowed: list[int]) -> tuple[list[int], list[int]]:
    """The first `server_cpus` of the CPUs this process may use for the server, the rest for
    the clients."""
    allowed = sorted(allowed)
    if not 0 < server_cpus < len(allowed):
        raise ValueError(f"--server-cpus {server_cpus}: this machine has {len(allowed)} CPUs and pgbench "
                         f"needs at least one of them; use 1 to {len(allowed) - 1}")
    return allowed[:server_cpus], allowed[server_cpus:]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """Live processes and temporary directories to clean up, whatever happens."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.servers: list["Server"] = []
        self.procs: list[subprocess.Popen] = []
        self.dirs: list[Path] = []

    def cleanup(self) -> None:
        with self.lock:
            servers, self.servers = list(self.servers), []
            procs, self.procs = list(self.procs), []
            dirs, self.dirs = list(self.dirs), []
        for p in procs:
            kill_group(p, signal.SIGKILL, 0)
        for s in reversed(servers):
            try:
                s.stop()
            except Exception as e:  # keep cleaning up the rest
                warn(f"stopping {s.name}: {e}")
        for d in reversed(dirs):
            shutil.rmtree(d, ignore_errors=True)


REGISTRY = Registry()
atexit.register(REGISTRY.cleanup)


def install_signal_handlers() -> None:
    """Turn SIGTERM/SIGHUP into KeyboardInterrupt so try/finally blocks run."""

    def handler(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)
    # SIGINT may be ignored when started in the background by a non-interactive shell
    signal.signal(signal.SIGINT, signal.default_int_handler)


def kill_group(proc: subprocess.Popen, sig: int, wait: float) -> int | None:
    """Send `sig` to the process group led by `proc` (started with start_new_session);
    wait up to `wait` seconds for the leader to exit and return its exit code."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    try:
        return proc.wait(timeout=wait) if wait > 0 else proc.poll()
    except subprocess.TimeoutExpired:
        return None


def make_tempdir(prefix: str, parent: Path | None) -> Path:
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=str(parent) if parent else None))
    with REGISTRY.lock:
        REGISTRY.dirs.append(d)
    return d


# ---------------------------------------------------------------- PostgreSQL install

def ensure_postgres_installed(bin_dir: Path) -> None:
    needed = ["postgres", "initdb", "pg_ctl", "pgbench", "psql"]
    if all((bin_dir / b).exists() for b in needed):
        return
    if bin_dir != PG_BIN_DEFAULT:
        raise RuntimeError(f"PostgreSQL binaries missing in {bin_dir}: "
                           + ", ".join(b for b in needed if not (bin_dir / b).exists()))
    log("PostgreSQL 15 not found; installing the Debian package postgresql-15 ...")
    prefix = [] if os.geteuid() == 0 else ["sudo"]
    if prefix and not shutil.which("sudo"):
        raise RuntimeError("PostgreSQL 15 is missing and sudo is not available; "
                           "run: apt-get update && apt-get install -y postgresql-15")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (prefix + ["apt-get", "update"], prefix + ["apt-get", "install", "-y", "postgresql-15"]):
        log("+ " + shlex.join(cmd))
        subprocess.run(cmd, check=True, env=env)
    if not all((bin_dir / b).exists() for b in needed):
        raise RuntimeError(f"postgresql-15 installed but binaries are still missing in {bin_dir}")


def ensure_bench_user() -> pwd.struct_passwd | None:
    """PostgreSQL refuses to run as root: return the unprivileged user to run it as
    (created if needed), or None when we are not root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(BENCH_USER)
    except KeyError:
        pass
    log(f"creating unprivileged user {BENCH_USER} to run PostgreSQL (it refuses to run as root)")
    subprocess.run(["useradd", "-m", "-s", "/bin/sh", BENCH_USER], check=True)
    return pwd.getpwnam(BENCH_USER)


# ---------------------------------------------------------------- servers

class Server:
    """Common part: a server process in its own process group, logging to a file."""

    name = "?"
    label = "?"
    stop_signal = signal.SIGTERM

    def __init__(self, workdir: Path, log_path: Path, settings: dict[str, str]):
        self.workdir = workdir
        self.log_path = log_path
        self.settings = settings
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.commands: list[list[str]] = []
        self.exit_code: int | None = None
        self.was_running = False  # still running when stop() was called
        self._log_file = None
        # clients connect through this server's Unix-domain socket (in `sockdir`), or to
        # 127.0.0.1 over TCP; set by the caller before start()
        self.transport = "unix"
        # (certificate, key) PEM files when the run measures TLS: copied into the server's
        # directory (owned by its user, mode 0600, as PostgreSQL requires) and turned on
        self.tls_files: tuple[Path, Path] | None = None
        # CPUs the server and its clients (pgbench, psql) are pinned to; None: not pinned.
        # Set by the caller before start()
        self.cpus: list[int] | None = None
        self.client_cpus: list[int] | None = None
        # unix socket in a short private directory (socket paths are limited to ~107 bytes)
        self.sockdir = make_tempdir("sbsock-", None)

    def client_host(self) -> str:
        """What pgbench and psql get as -h: the socket directory, or the TCP address."""
        return str(self.sockdir) if self.transport == "unix" else "127.0.0.1"

    def client_command(self, cmd: list[str]) -> list[str]:
        """A client command (pgbench, psql) pinned to the clients' CPUs, if they are set."""
        return pinned(cmd, self.client_cpus)

    def affinity(self) -> str | None:
        """The CPUs the server process may run on, as the kernel has it (to check the pinning)."""
        try:
            return cpu_list_text(sorted(os.sched_getaffinity(self.proc.pid))) if self.proc else None
        except OSError:
            return None

    def _spawn(self, cmd: list[str], user: pwd.struct_passwd | None = None) -> None:
        cmd = pinned(cmd, self.cpus)
        self.commands.append(cmd)
        self._log_file = open(self.log_path, "ab")
        kwargs = {}
        if user is not None:
            kwargs = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        with REGISTRY.lock:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         env=clean_env(), cwd=str(self.workdir), **kwargs)
            REGISTRY.servers.append(self)

    def tls_settings(self, owner: pwd.struct_passwd | None = None) -> list[str]:
        """-c arguments that turn TLS on with this server's copy of the certificate."""
        if self.tls_files is None:
            return []
        names = []
        for src, name in zip(self.tls_files, ("server.crt", "server.key")):
            dst = self.workdir / name
            shutil.copyfile(src, dst)
            dst.chmod(0o600)
            if owner is not None:
                os.chown(dst, owner.pw_uid, owner.pw_gid)
            names.append(dst)
        return ["-c", "ssl=on", "-c", f"ssl_cert_file={names[0]}", "-c", f"ssl_key_file={names[1]}"]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout: float = 120) -> None:
        try:
            pgwire.wait_until_ready(self.port, timeout, self.alive)
        except (TimeoutError, RuntimeError) as e:
            raise RuntimeError(f"{self.label} failed to start: {e}\n--- last lines of {self.log_path}:\n"
                               + self.log_tail()) from None

    def log_tail(self, n: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def connect(self, timeout: float | None = 30) -> pgwire.Connection:
        return pgwire.Connection("127.0.0.1", self.port, timeout=timeout)

    def stop(self, timeout: float = 120) -> None:
        """Stop the server (clean shutdown, then SIGKILL of the whole group after `timeout`)."""
        if self.proc is None:
            return
        self.was_running = self.proc.poll() is None
        rc = kill_group(self.proc, self.stop_signal, timeout)
        if rc is None:
            warn(f"{self.label} did not stop within {timeout:.0f} s; killing it")
            rc = kill_group(self.proc, signal.SIGKILL, 30)
        # children (e.g. PostgreSQL backends) must not outlive the leader
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.exit_code = rc
        with REGISTRY.lock:
            if self in REGISTRY.servers:
                REGISTRY.servers.remove(self)
        if self._log_file:
            self._log_file.close()
        self.proc = None

    def cleanup(self) -> None:
        """Stop the server and remove its directories."""
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.sockdir, ignore_errors=True)


class PostgresServer(Server):
    name = "postgres"
    label = "PostgreSQL"
    stop_signal = signal.SIGINT  # "fast" shutdown: SIGTERM would be "smart" (waits for clients)

    def __init__(self, bin_dir: Path, workdir: Path, log_path: Path, settings: dict[str, str],
                 user: pwd.struct_passwd | None):
        super().__init__(workdir, log_path, settings)
        self.bin_dir = bin_dir
        self.user = user
        self.datadir = workdir / "data"

    def _own(self, path: Path) -> None:
        if self.user is not None:
            os.chown(path, self.user.pw_uid, self.user.pw_gid)

    def start(self) -> None:
        self._own(self.workdir)
        self._own(self.sockdir)
        self.workdir.chmod(0o700)
        cmd = [str(self.bin_dir / "initdb"), "-D", str(self.datadir), "-U", "postgres",
               "--auth=trust", "--encoding=UTF8", "--locale=C"]
        self.commands.append(cmd)
        kwargs = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        with open(self.log_path, "ab") as lf:
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=clean_env(),
                               cwd=str(self.workdir), **kwargs)
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed (exit {r.returncode})\n" + self.log_tail())
        self.port = free_port()
        cmd = [str(self.bin_dir / "postgres"), "-D", str(self.datadir), "-p", str(self.port),
               "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.sockdir}",
               *self.tls_settings(self.user)]
        for k, v in self.settings.items():
            cmd += ["-c", f"{k}={v}"]
        self._spawn(cmd, self.user)
        self.wait_ready()



class SteadyDBServer(Server):
    name = "steadydb"
    label = "SteadyDB"
    stop_signal = signal.SIGTERM

    def __init__(self, binary: Path, workdir: Path, log_path: Path, settings: dict[str, str]):
        super().__init__(workdir, log_path, settings)
        self.binary = binary
        self.datadir = workdir / "data"

    def start(self) -> None:
        self.port = free_port()
        cmd = [str(self.binary), "server", "--auth", "trust", "-D", str(self.datadir), "-p", str(self.port),
               "-c", f"unix_socket_directories={self.sockdir}", *self.tls_settings()]
        for k, v in self.settings.items():
            cmd += ["-c", f"{k}={v}"]
        self._spawn(cmd)
        self.wait_ready()


# ---------------------------------------------------------------- SteadyDB binary

def resolve_steadydb_binary(explicit: str | None, repo_root: Path, scratch: Path) -> tuple[Path, Path, dict]:
    """Find (or build) the SteadyDB binary and copy it to `scratch`, so that a rebuild
    during the benchmark cannot change what is measured. Returns (original, copy, info)."""
    if explicit:
        path = Path(explicit).expanduser().resolve()
        deadline = time.monotonic() + 120
        while not path.exists() and time.monotonic() < deadline:
            warn(f"{path} does not exist (being rebuilt?); retrying ...")
            time.sleep(5)
        if not path.exists():
            raise RuntimeError(f"SteadyDB binary {path} not found")
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR") or repo_root / "target")
        if not target.is_absolute():
            target = repo_root / target
        path = target / "release" / "steadydb"
        if not path.exists():
            log(f"{path} not found; building it with cargo build --release ...")
            if not shutil.which("cargo"):
                raise RuntimeError("cargo not found; build SteadyDB or pass --steadydb-bin")
            subprocess.run(["cargo", "build", "--release"], cwd=str(repo_root), check=True)
            if not path.exists():
                raise RuntimeError(f"cargo build --release did not produce {path}")
    copy = scratch / "steadydb"
    for attempt in range(10):
        try:
            shutil.copy2(path, copy)
            version = subprocess.run([str(copy), "--version"], capture_output=True, text=True,
                                     timeout=30, check=True).stdout.strip()
            break
        except (OSError, subprocess.SubprocessError) as e:
            if attempt == 9:
                raise RuntimeError(f"cannot copy/run SteadyDB binary {path}: {e}") from None
            warn(f"copying {path} failed ({e}); retrying ...")
            time.sleep(5)
    copy.chmod(0o755)
    info = {"binary": str(path), "binary_sha256": sha256_file(copy), "version_output": version}
    git = git_info(path.parent)
    if git:
        info["git_repo_containing_binary"] = git
    return path, copy, info


def sha256_file(path: Path) -> str:
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_info(start: Path) -> dict | None:
    """HEAD commit of the git checkout containing `start` (the binary may be older than HEAD)."""
    try:
        top = subprocess.run(["git", "-C", str(start), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=10)
        if top.returncode != 0:
            return None
        root = top.stdout.strip()
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip() != ""
        return {"root": root, "head": head, "dirty": dirty,
                "note": "HEAD of the checkout holding the binary; the binary may have been built from another commit"}
    except (OSError, subprocess.SubprocessError):
        return None
