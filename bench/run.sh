#!/usr/bin/env bash
# Run the SteadyDB vs PostgreSQL benchmark in a virtualenv at bench/.venv (created on first use).
# With no arguments it runs the standard set; arguments are passed to bench/run.py
# (e.g. bench/run.sh --checkpoint-dip for the checkpoint-dip benchmark).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "creating virtualenv $venv"
    if ! "$python" -m venv "$venv"; then
        rm -rf "$venv"
        echo "could not create a virtualenv; on Debian/Ubuntu: apt-get install python3-venv" >&2
        exit 1
    fi
fi

# (re)install the requirements when requirements.txt changes
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    echo "$want" > "$stamp"
fi

exec "$venv/bin/python" "$here/run.py" "$@"
