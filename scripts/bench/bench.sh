#!/usr/bin/env bash
# Runs every benchmark, or the named ones, and ends with one table: measurement, this server, the reference it is
# compared with in the same run, the ratio, the goal, met or not, and the load average around the runs.
#
#   scripts/bench/bench.sh                       upload browser-upload package download deployed deployed-upload hostile import-load delta storage scan panel-load media player stats
#   scripts/bench/bench.sh download panel-load   only these
#
# Each script also runs alone (scripts/bench/bench-NAME.sh, see its header for its settings); here they share one
# release build (BENCH_SKIP_BUILD=1 after the first) and report through $BENCH_RESULTS (scripts/bench/bench-result.sh).
# Sizes and runs are each script's defaults; the whole set takes about half an hour on a 2-core machine.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
all=(upload browser-upload package download deployed deployed-upload hostile import-load delta storage scan panel-load media player stats)
names=("$@"); (( ${#names[@]} )) || names=("${all[@]}")
for name in "${names[@]}"; do
  [[ -x "$root/scripts/bench/bench-$name.sh" ]] || { echo "no benchmark named $name (choose from: ${all[*]})" >&2; exit 2; }
done

export BENCH_RESULTS; BENCH_RESULTS="$(mktemp /tmp/trail-bench-results.XXXXXX)"
trap 'rm -f "$BENCH_RESULTS"' EXIT
# One build folder for all (each script's own default may differ): BENCH_SCRATCH, else the repository's .build.
export BENCH_SCRATCH="${BENCH_SCRATCH:-$root/.build}"
echo "release build in $BENCH_SCRATCH ..."
(cd "$root" && swift build -c release --product trail-companion --scratch-path "$BENCH_SCRATCH" 2>&1 | tail -1)
export BENCH_SKIP_BUILD=1
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
failed=()
for name in "${names[@]}"; do
  echo; echo "=== bench-$name.sh ==="
  "$root/scripts/bench/bench-$name.sh" || failed+=("$name")
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "Summary ($(date -u +%Y-%m-%d), $(nproc) cores, load average $load_before before, $load_after after)"
python3 - "$BENCH_RESULTS" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
header = ["measurement", "this server", "reference", "ratio", "goal", "met"]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for row in rows:
    print("| " + " | ".join(row) + " |")
PY
(( ${#failed[@]} == 0 )) || { echo "benchmarks that failed: ${failed[*]}"; exit 1; }
