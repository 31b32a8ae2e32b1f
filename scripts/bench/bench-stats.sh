#!/usr/bin/env bash
# Visitor statistics: 1,000 scripted visits (30 % made offline and sent later) against a release build, and the
# statistics the server then answers compared with the script's own totals (exact expected; the goal allows ±1 %);
# the events route's time for a batch of 50 (p50, p95; goal p95 < 5 ms); and 2,000 events a second sent for a while
# (what the route held) against the panel's pages, timed before and during that load (goal: at most 10 % slower).
# Each scripted phone posts from an address of its own (X-Forwarded-For, the server trusting loopback), as phones
# do: one address adds at most 2,000 events an hour.
#
#   scripts/bench/bench-stats.sh     (BENCH_SKIP_BUILD=1 reuses the release build; BENCH_BIN names a binary to measure;
#                               STATS_VISITS, STATS_OFFLINE (share), STATS_SECONDS (the load's length), STATS_RATE)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/trail-stats.XXXXXX)"
scratch="${BENCH_SCRATCH:-$root/.build}"
source "$root/scripts/bench/bench-lib.sh"
cleanup() { bench_stop_server; rm -rf "$work"; }
trap cleanup EXIT

bench_build
BENCH_SERVE_FLAGS="--trusted-proxies 127.0.0.0/8 ${BENCH_SERVE_FLAGS:-}" bench_start_server

echo "setting up: a released three-stop tour ..."
python3 - "$work/view.png" <<'PY'
import struct, sys, zlib
w, h = 64, 32
raw = b"".join(b"\x00" + bytes((x * 7 + y) % 256 for x in range(w * 3)) for y in range(h))
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
tour=$(bench_tour "Counted Walk")
for stop in "Trailhead 44.40 -122.00" "Lake 44.41 -122.05" "Summit 44.42 -122.10"; do
  read -r name lat lon <<<"$stop"
  waypoint=$(bench_waypoint "$tour" "$name" "$lat" "$lon")
  bench_upload "$tour" "$waypoint" "$work/view.png" image/png "$name.png" >/dev/null
done
read -r package version _ <<<"$(bench_release "$tour")"

echo "running the visits, the batch timings and the load ..."
python3 "$root/scripts/bench/load/stats_bench.py" --base "$base" --token "$author" --site bench --tour "$tour" \
  --package "$package" --version "$version" --visits "${STATS_VISITS:-1000}" --offline "${STATS_OFFLINE:-0.3}" \
  --seconds "${STATS_SECONDS:-30}" --rate "${STATS_RATE:-2000}" --results "$work/results.tsv"

while IFS=$'\t' read -r measurement this reference ratio goal met; do
  bench_result "$measurement" "$this" "$reference" "$ratio" "$goal" "$met"
done < "$work/results.tsv"
echo "server peak RSS: $(grep VmHWM "/proc/$server_pid/status" | awk '{print $2, $3}')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
