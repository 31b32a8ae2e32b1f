#!/usr/bin/env bash
# The control panel under a district's load: locust (scripts/bench/load/panel_load.py) runs 40 rangers
# (tour and waypoint pages, saving a waypoint, reordering, uploading a 60 KB picture), 10 reviewers (the queue, a
# request, approving) and 20 apps (catalog, package list, metadata, downloads) for 60 s against a release build, and
# prints p50/p95/p99 per page and API call, failures, the server's peak RSS and any SQLITE_BUSY in its log.
#
#   scripts/bench/bench-panel-load.sh            (BENCH_SKIP_BUILD=1 reuses the release build; LOAD_SECONDS, LOAD_USERS,
#                                           LOAD_THINK: the longest pause between a user's requests, 3 s; 0: none)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/trail-load.XXXXXX)"
scratch="${BENCH_SCRATCH:-$root/.build}"
seconds="${LOAD_SECONDS:-60}"
users="${LOAD_USERS:-70}"
source "$root/scripts/bench/bench-lib.sh"
cleanup() { bench_stop_server; [[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

[[ -x "$root/.venv/bin/python3" ]] && export PATH="$root/.venv/bin:$PATH"
python3 -c 'import locust' 2>/dev/null || pip install -q locust

bench_build
bench_start_server
password='bench password 1234'
cli() { "$bin" "$@" --root "$root" --data "$data"; }

echo "setting up: accounts, 40 tours, 20 waiting requests, a released package ..."
python3 - "$work/view.png" <<'PY'
import struct, sys, zlib, random
random.seed(7)
w, h = 200, 100
raw = b"".join(b"\x00" + bytes(random.getrandbits(8) for _ in range(w * 3)) for _ in range(h))
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b""))
PY
rangers="[]"; reviewers="[]"
for i in $(seq 1 10); do
  cli user create --email "reviewer$i@trail.test" --name "Reviewer $i" --password "$password" >/dev/null
  cli member add --site bench --email "reviewer$i@trail.test" --role reviewer >/dev/null
done
for i in $(seq 1 40); do
  cli user create --email "ranger$i@trail.test" --name "Ranger $i" --password "$password" >/dev/null
  cli member add --site bench --email "ranger$i@trail.test" --role author >/dev/null
  tour=$(bench_tour "Ranger $i Loop")
  w1=$(bench_waypoint "$tour" "Fish Lake" 44.40 -122.0)
  w2=$(bench_waypoint "$tour" "Summit" 44.41 -122.1)
  rangers=$(python3 -c "import json,sys; r=json.loads(sys.argv[1]); r.append({'email':'ranger$i@trail.test','tour':$tour,'waypoints':[$w1,$w2]}); print(json.dumps(r))" "$rangers")
done
pending=()
for i in $(seq 1 20); do
  tour=$(bench_tour "Review $i")
  w=$(bench_waypoint "$tour" "Overlook" 44.40 -122.0)
  asset=$(bench_upload "$tour" "$w" "$work/view.png" image/png "view.png")
  api "$author" -X PATCH "$base/api/v1/manage/assets/$asset" -d '{"altText": "A test picture."}' >/dev/null
  pending+=("$(api "$author" -X POST "$base/api/v1/manage/tours/$tour/publish" | json "['requestId']")")
done
tour=$(bench_tour "Released Walk")
w=$(bench_waypoint "$tour" "Trailhead" 44.40 -122.0)
asset=$(bench_upload "$tour" "$w" "$work/view.png" image/png "view.png")
api "$author" -X PATCH "$base/api/v1/manage/assets/$asset" -d '{"altText": "A test picture."}' >/dev/null
read -r package version sha < <(bench_release "$tour")
size=$(stat -c %s "$data/packages/$package/$version.zip")
for request in "${pending[@]}"; do  # wait for the builds, so the reviewers find pending requests
  for _ in $(seq 1 600); do
    [[ "$(api "$author" "$base/api/v1/manage/publish-requests/$request" | json "['state']")" != building ]] && break; sleep 0.2
  done
done
python3 - "$work/setup.json" "$rangers" "$package" "$size" "$password" "$work/view.png" "${pending[@]}" <<'PY'
import json, sys
path, rangers, package, size, password, png, *pending = sys.argv[1:]
json.dump({"rangers": json.loads(rangers), "reviewers": [f"reviewer{i}@trail.test" for i in range(1, 11)], "site": "bench",
           "package": package, "packageSize": int(size), "password": password, "png": png, "pendingRequests": pending},
          open(path, "w"))
PY

# The server's resident memory, sampled every 0.2 s while locust runs.
( while kill -0 "$server_pid" 2>/dev/null; do awk '/VmRSS/ {print $2}' "/proc/$server_pid/status" >> "$work/rss.txt"; sleep 0.2; done ) &
sampler=$!
idle_rss=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")
echo "load: think time up to ${LOAD_THINK:-3} s, $users users ($((users * 40 / 70)) rangers, $((users * 10 / 70)) reviewers, $((users * 20 / 70)) apps) for ${seconds}s against $base; load average $(cut -d' ' -f1-3 /proc/loadavg)"
LOAD_SETUP="$work/setup.json" locust -f "$root/scripts/bench/load/panel_load.py" --headless -u "$users" -r 10 -t "${seconds}s" \
  --host "$base" --csv "$work/load" --reset-stats --only-summary > "$work/locust.log" 2>&1 || true
kill "$sampler" 2>/dev/null || true; sampler=""
peak_rss=$(sort -n "$work/rss.txt" | tail -1)
busy=$(grep -ci 'SQLITE_BUSY\|database is locked' "$work/server.log" || true)

python3 - "$work/load_stats.csv" "$idle_rss" "$peak_rss" "$busy" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
idle, peak, busy = int(sys.argv[2]) // 1024, int(sys.argv[3]) // 1024, int(sys.argv[4])
print(f"\n{'request':58} {'count':>6} {'fail':>5} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}  goal (p95)")
met_all = True
for row in rows:
    if row["Name"] == "Aggregated":
        continue
    api = "/api/" in row["Name"]
    download = "download" in row["Name"] or "/login" in row["Name"]
    goal = None if download else (50 if api else 100)
    if row["95%"] == "N/A":
        continue
    p95 = float(row["95%"])
    met = goal is None or p95 < goal
    met_all &= met and row["Failure Count"] == "0"
    goal_text = "—" if goal is None else f"< {goal} {'met' if met else 'NOT met'}"
    print(f"{row['Name']:58} {row['Request Count']:>6} {row['Failure Count']:>5} {row['50%']:>7} {row['95%']:>7} {row['99%']:>7}  {goal_text}")
total = next(r for r in rows if r["Name"] == "Aggregated")
print(f"\nall: {total['Request Count']} requests, {total['Failure Count']} failures, {float(total['Requests/s']):.0f} req/s; "
      f"server RSS {idle} MiB idle, {peak} MiB peak (goal < 200); SQLITE_BUSY in the log: {busy}")
print("goals met" if met_all and peak < 200 and busy == 0 else "goals NOT all met")
import os
if os.environ.get("BENCH_RESULTS"):
    timed = [r for r in rows if r["Name"] != "Aggregated" and r["95%"] != "N/A" and "download" not in r["Name"] and "/login" not in r["Name"]]
    pages = max((float(r["95%"]), r["Name"]) for r in timed if "/api/" not in r["Name"])
    apis = max((float(r["95%"]), r["Name"]) for r in timed if "/api/" in r["Name"])
    failures = int(total["Failure Count"])
    with open(os.environ["BENCH_RESULTS"], "a") as out:
        out.write(f"panel under load: slowest page p95 ({pages[1]})\t{pages[0]:.0f} ms\t-\t-\t< 100 ms\t{'yes' if pages[0] < 100 else 'no'}\n")
        out.write(f"panel under load: slowest JSON p95 ({apis[1]})\t{apis[0]:.0f} ms\t-\t-\t< 50 ms\t{'yes' if apis[0] < 50 else 'no'}\n")
        out.write(f"panel under load: failures, SQLITE_BUSY, peak RSS\t{failures}, {busy}, {peak} MiB\t-\t-\t0, 0, < 200 MiB\t"
                  f"{'yes' if failures == 0 and busy == 0 and peak < 200 else 'no'}\n")
PY
# What failed, if anything, as locust recorded it.
python3 - "$work/load_failures.csv" <<'PY'
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    print(f"failed {row['Occurrences']}×: {row['Method']} {row['Name']}: {row['Error'][:200]}")
PY
