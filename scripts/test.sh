#!/usr/bin/env bash
# The project's test command: formatting, lints, build, Rust tests, the Python
# acceptance suite (psql, psycopg, pgbench) against the release binary, and the
# benchmark harness's unit tests.
#
# Usage: scripts/test.sh            (from any directory)
#
# Environment (all optional):
#   CARGO_TARGET_DIR          cargo's target directory (default: <repo>/target)
#   STEADYDB_BIN              server binary for the Python suite
#                             (default: $CARGO_TARGET_DIR/release/steadydb)
#   STEADYDB_TEST_EXTERNAL    run the Rust and Python suites against an already running
#                             server, e.g. "host=127.0.0.1 port=5432 user=postgres"
#   STEADYDB_PGBENCH_SCALE, STEADYDB_PGBENCH_TIME, STEADYDB_WORKLOAD_TIME,
#   STEADYDB_WORKLOAD_CLIENTS, STEADYDB_UPDATE_PK_ROWS
#                             smaller pgbench runs for quick local iterations
#   PYTEST_ARGS               extra arguments for pytest (e.g. "-x -k isolation")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"

STARTED_AT=$SECONDS
section() {
    local elapsed=$((SECONDS - STARTED_AT))
    printf '\n==================== %s  [+%dm%02ds]\n' "$1" $((elapsed / 60)) $((elapsed % 60))
}
trap 'rc=$?; if [ $rc -ne 0 ]; then printf "\n==================== FAILED (exit code %d) in step above\n" "$rc"; fi' EXIT

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "need root to run: $*" >&2
        return 1
    fi
}

add_pg_bin_to_path() {
    local d
    for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        if [ -x "$d/pgbench" ] || [ -x "$d/psql" ]; then
            case ":$PATH:" in
                *":$d:"*) ;;
                *) PATH="$PATH:$d" ;;
            esac
        fi
    done
    export PATH
}

# ---------------------------------------------------------------------------
section "PostgreSQL client tools (psql, pgbench)"
add_pg_bin_to_path
if ! command -v psql >/dev/null 2>&1 || ! command -v pgbench >/dev/null 2>&1; then
    echo "psql/pgbench not found; installing PostgreSQL 15 packages"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update
    if ! as_root apt-get install -y postgresql-15 postgresql-client-15; then
        echo "postgresql-15 is not available here; installing the distribution's PostgreSQL"
        as_root apt-get install -y postgresql postgresql-client
    fi
    add_pg_bin_to_path
fi
command -v psql >/dev/null 2>&1 || { echo "psql still not found" >&2; exit 1; }
command -v pgbench >/dev/null 2>&1 || { echo "pgbench still not found" >&2; exit 1; }
echo "psql:    $(command -v psql) ($(psql --version))"
echo "pgbench: $(command -v pgbench) ($(pgbench --version))"

# ---------------------------------------------------------------------------
section "Python environment (psycopg, pytest, SQLAlchemy, asyncpg, Django)"
PY=""
PY_PACKAGES=('psycopg[binary]' pytest 'sqlalchemy>=2' asyncpg 'django>=5,<5.2')
if [ -x .venv/bin/python ] && .venv/bin/python -c 'import psycopg, pytest, sqlalchemy, asyncpg, django' >/dev/null 2>&1; then
    PY=.venv/bin/python
elif [ -x .venv/bin/python ] || python3 -m venv .venv >/dev/null 2>&1 && [ -x .venv/bin/python ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet "${PY_PACKAGES[@]}"
    PY=.venv/bin/python
else
    echo "python3 -m venv is unavailable; installing with pip --user"
    rm -rf .venv
    python3 -m pip install --quiet --user "${PY_PACKAGES[@]}" ||
        python3 -m pip install --quiet --user --break-system-packages "${PY_PACKAGES[@]}"
    PY=python3
fi
"$PY" -c 'import sys, psycopg, pytest, sqlalchemy; print("python", sys.version.split()[0], "psycopg", psycopg.__version__, "(" + psycopg.pq.__impl__ + ")", "pytest", pytest.__version__, "sqlalchemy", sqlalchemy.__version__)'

# ---------------------------------------------------------------------------
section "Rust toolchain"
cargo --version
if ! cargo fmt --version >/dev/null 2>&1; then rustup component add rustfmt; fi
if ! cargo clippy --version >/dev/null 2>&1; then rustup component add clippy; fi
cargo fmt --version
cargo clippy --version

section "cargo fmt --check"
cargo fmt --check

section "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

section "cargo build --release"
cargo build --release

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export STEADYDB_BIN="${STEADYDB_BIN:-$TARGET_DIR/release/steadydb}"
if [ -n "${STEADYDB_TEST_EXTERNAL:-}" ]; then
    echo "WARNING: STEADYDB_TEST_EXTERNAL is set: the suites run against '$STEADYDB_TEST_EXTERNAL', not $STEADYDB_BIN"
fi

section "cargo test --release"
cargo test --release

# ---------------------------------------------------------------------------
section "pytest tests/python (STEADYDB_BIN=$STEADYDB_BIN)"
# The servers' data directories go under the temporary directory; the larger-than-memory
# test needs about 1.3 GB there at its peak.
df -h "${TMPDIR:-/tmp}" | sed 's/^/temporary directory: /'
# shellcheck disable=SC2086
"$PY" -m pytest tests/python -q ${PYTEST_ARGS:-}

section "benchmark harness unit tests (bench/tests)"
"$PY" -m unittest discover -s bench/tests

section "all tests passed"
