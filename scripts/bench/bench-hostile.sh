#!/usr/bin/env bash
# Peers that never read: the security review's probe against a release build. CLIENTS connections (default 50) each
# send about 115 KB of pipelined `GET /api/v1/sites` and read nothing for 8 s, while `/healthz` is asked on a new
# connection every 0.5 s; then they wait for the server's write time-out (60 s with no byte taken) to close them, up
# to 90 s; then they leave and `/healthz` is asked for 3 s more.
#
#   scripts/bench/bench-hostile.sh [CLIENTS]
#
# Goals: every /healthz answered within 3 s, during the hold and after; every connection closed by the server.
# Prints the slowest /healthz of each phase and how many connections the server closed. Uses scripts/bench/bench-lib.sh
# (BENCH_SCRATCH, BENCH_BIN, BENCH_SKIP_BUILD, BENCH_WORK, KEEP); the exit status is 0 unless something failed
# outright (a missed goal is reported, not a failure).
set -euo pipefail
clients="${1:-50}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build-bench}"
if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-hostile.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
cleanup() { bench_stop_server; if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
bench_build
bench_start_server
port="${base##*:}"
echo "$clients clients, 115 KB of pipelined requests each, reading nothing ..."
python3 "$root/Tests/TrailServerTests/Scripts/slow_client.py" hold "$port" /api/v1/sites "$clients" 115000 8 90 > "$work/hold.json"
python3 - "$work/hold.json" "$clients" <<'PY'
import json, sys
result, clients = json.load(open(sys.argv[1])), int(sys.argv[2])
def slowest(probes):
    return "unanswered" if any(p is None for p in probes) else f"{max(probes):.3f} s"
during, after = slowest(result["during"]), slowest(result["after"])
closed = result["closedByServer"]
met = during != "unanswered" and after != "unanswered" and max(result["during"] + result["after"]) <= 3 and closed == clients
print(f"slowest /healthz while they held on: {during}; after they left: {after}; closed by the server: {closed} of {clients}")
print("goals met" if met else "goal missed")
open(sys.argv[1] + ".row", "w").write(f"{during}\t{after}\t{closed}\t{'yes' if met else 'no'}\n")
PY
IFS=$'\t' read -r during after closed met < "$work/hold.json.row"
bench_result "$clients peers pipelining and reading nothing: slowest /healthz" "$during (after: $after), $closed closed" "-" "-" "<= 3 s, all closed" "$met"
