#!/usr/bin/env bash
# The benchmark set for a 16-core machine, as argument groups for the kit that runs the project
# there: `bash .manycore/run.sh ARGS [-- ARGS2 [-- ARGS3]]` runs `python3 bench/run.py` (with
# the kit's own --steadydb-bin, --pg-bin-dir, --data-root and --out) once per group, at most
# three groups per call, and a call must finish in under 8 minutes. The set does not fit one
# call, so it is split in two:
#
#   bench/manycore.sh --print             # print both calls' commands
#   bench/manycore.sh --call 1 [--print]  # run (or print) the first call from the repository root
#   bench/manycore.sh --call 2 [--print]
#
# Time estimate: about 10 s of overhead per (workload, clients, system) run on top of its
# duration (initdb and start, CHECKPOINT after the load, 1 s for the statistics, latency
# percentiles from the transaction logs, stop), plus the loads: about 5 s for update_pk's
# 1,000,000 rows, about 7 s for pgbench -i -s 50, about 1.5 s at scale 10 (bench/tests checks
# these sums against the groups below).
#
# call 1, about 414 s (7 minutes):
#   insert_serial, upsert, update_pk, tpcb (scale 50) at 32 and 256 clients, 8 s:
#     16 runs x 18 s + 4 x 5 s + 4 x 7 s                                  = 336 s
#   select_pk (scale 10) at 32 and 256 clients, 8 s: 4 x 18 s + 4 x 1.5 s   =  78 s
# call 2, about 404 s (7 minutes):
#   update_pk with synchronous_commit=off on both, 32 and 256 clients, 10 s:
#     4 x 20 s + 4 x 5 s                                                  = 100 s
#   select_pk and update_pk at 32 clients, server on 4 and then 8 CPUs, 10 s:
#     8 x 20 s + 4 x 5 s + 4 x 1.5 s                                      = 186 s
#   checkpoint dip: update_pk, 32 clients, 44 s, CHECKPOINT at 12 and 32 s (10 s before and
#     after each, clear of the other): 2 x 54 s + 2 x 5 s                 = 118 s
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

call_1=(
    "--workloads insert_serial,upsert,update_pk,tpcb --scale 50 --clients 32,256 --duration 8"
    "--workloads select_pk --clients 32,256 --duration 8"
)
call_2=(
    "--workloads update_pk --clients 32,256 --duration 10 --extra-steadydb-conf synchronous_commit=off --extra-postgres-conf synchronous_commit=off"
    "--workloads select_pk,update_pk --clients 32 --duration 10 --server-cpus 4,8"
    "--checkpoint-dip --duration 44 --checkpoint-at 12,32"
)

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

call=""
print=0
while [ $# -gt 0 ]; do
    case "$1" in
        --call) [ $# -ge 2 ] || usage 2; call="$2"; shift 2 ;;
        --call=*) call="${1#--call=}"; shift ;;
        --print) print=1; shift ;;
        -h|--help) usage 0 ;;
        *) echo "unknown argument: $1" >&2; usage 2 ;;
    esac
done

# the kit's command for call $1, one word per line
command_of() {
    local -n groups="call_$1"
    local i
    echo bash
    echo .manycore/run.sh
    for i in "${!groups[@]}"; do
        [ "$i" -gt 0 ] && echo --
        # shellcheck disable=SC2086  # each group is a list of words
        printf '%s\n' ${groups[$i]}
    done
}

print_call() {
    local words
    mapfile -t words < <(command_of "$1")
    echo "${words[*]}"  # no word needs quoting
}

case "$call" in
    "")
        if [ "$print" -eq 1 ]; then
            echo "# call 1"; print_call 1
            echo "# call 2"; print_call 2
            exit 0
        fi
        echo "choose --call 1 or --call 2 (or --print to see both)" >&2
        usage 2 ;;
    1|2) ;;
    *) echo "--call takes 1 or 2" >&2; exit 2 ;;
esac

if [ "$print" -eq 1 ]; then
    print_call "$call"
    exit 0
fi
cd "$repo"
if [ ! -f .manycore/run.sh ]; then
    echo "$repo/.manycore/run.sh not found: the kit is only present on the machine it runs on (use --print)" >&2
    exit 1
fi
mapfile -t words < <(command_of "$call")
exec "${words[@]}"
