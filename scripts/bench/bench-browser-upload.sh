#!/usr/bin/env bash
# Browser upload benchmark: the panel's own uploader (Public/js/uploader.js, tus in PATCHes of its chunk size) in
# Debian's headless Chromium, against the work an upload cannot skip, copying and hashing every byte.
#
#   scripts/bench/bench-browser-upload.sh [SIZE_MIB]        default 512
#
# What it does:
#   1. builds the server in release mode (skipped with BENCH_SKIP_BUILD=1) and starts it on a temp data folder
#      (scripts/bench/bench-lib.sh), with an author, a site, a tour;
#   2. writes SIZE_MIB of random bytes after a PNG signature (so the file is accepted), read once into the page cache;
#   3. reference, best of BENCH_RUNS (default 3): `tee copy < file | openssl dgst -sha256` (copy+hash: one pass that
#      copies and hashes, as an upload does);
#   4. BENCH_RUNS uploads through the waypoint page in a new headless Chromium each (signed in through the form, the
#      file chosen in the page's file field), each to a new waypoint, timed from choosing the file to the row saying
#      "Uploaded" (scripts/bench/load/browser_upload.py); the best is reported, with the server's SHA-256 checked.
# Goal: at least 0.5 x copy+hash.
#
# Needs the browser suite's tools: Debian's chromium and chromium-driver, and selenium in .venv
# (scripts/install-deps.sh --test). Environment: BENCH_SCRATCH, BENCH_WORK, KEEP=1, BENCH_RUNS, BENCH_SKIP_BUILD=1.
set -euo pipefail

size_mib="${1:-512}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
runs="${BENCH_RUNS:-3}"
python="$root/.venv/bin/python"
[[ -x "$python" ]] || { echo "no .venv: run scripts/install-deps.sh --test" >&2; exit 2; }
for tool in curl openssl sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-browser-upload.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
cleanup() {
  bench_stop_server
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

bench_build
bench_start_server
tour=$(bench_tour "Browser Upload Bench")
file="$work/bench.png"
{ printf '\x89PNG\r\n\x1a\n'; head -c $(( size_mib * 1048576 - 8 )) /dev/urandom; } > "$file"
expected=$(sha256sum "$file" | cut -d' ' -f1)
cat "$file" > /dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"

best_reference=0
for _ in $(seq 1 "$runs"); do
  start=$(bench_now); tee "$work/copy" < "$file" | openssl dgst -sha256 > /dev/null; end=$(bench_now)
  rm -f "$work/copy"
  rate=$(awk -v m="$size_mib" -v s="$(bench_elapsed "$start" "$end")" 'BEGIN { printf "%.0f", m / s }')
  (( rate > best_reference )) && best_reference=$rate
done

# The server's CPU seconds (user + system) so far: what the server spent, against the wall time the browser took.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$server_pid/stat"; }
best=0
for run in $(seq 1 "$runs"); do
  waypoint=$(bench_waypoint "$tour" "Stop $run" 44.40 -122.0$run)
  cpu_before=$(server_cpu)
  result=$("$python" "$root/scripts/bench/load/browser_upload.py" "$base" author@trail.test 'bench password 1234' \
    "/tours/$tour/waypoints/$waypoint" "$file" | tail -1)
  cpu_after=$(server_cpu)
  seconds=$(printf '%s' "$result" | json "['seconds']")
  status=$(printf '%s' "$result" | json "['status']")
  [[ "$status" == Uploaded* ]] || { echo "the upload failed: $status" >&2; exit 1; }
  sha=$(api "$author" "$base/api/v1/manage/tours/$tour" | python3 -c "
import json, sys
tour = json.load(sys.stdin)
print(next(a['sha256'] for w in tour['waypoints'] if w['id'] == $waypoint for a in w.get('assets', [])))")
  [[ "$sha" == "$expected" ]] || { echo "the server's SHA-256 is not the file's" >&2; exit 1; }
  rate=$(awk -v m="$size_mib" -v s="$seconds" 'BEGIN { printf "%.0f", m / s }')
  echo "run $run: ${seconds} s, $rate MiB/s, server CPU $(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.2f", b - a }') s"
  (( rate > best )) && best=$rate
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

ratio=$(awk -v a="$best" -v b="$best_reference" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
met=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.5 ? "yes" : "no") }')
bench_result "browser upload (tus, uploader.js), $size_mib MiB" "$best MiB/s" "copy+hash $best_reference MiB/s" "$ratio" ">= 0.5" "$met"
cat <<EOF

Browser upload: $size_mib MiB, headless Chromium, best of $runs
| measurement | MiB/s | ratio to copy+hash |
|---|---|---|
| copy+hash (tee | openssl dgst -sha256) | $best_reference | 1.00 |
| the panel's uploader (tus) | $best | $ratio (goal >= 0.5: $met) |
EOF
