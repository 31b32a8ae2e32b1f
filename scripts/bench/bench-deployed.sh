#!/usr/bin/env bash
# The deployed chain: the server behind nginx running the project's own deploy/nginx.conf, against nginx serving the
# same bytes as static files, in the same run. This is what a park's phones meet, so it is the figure that counts;
# the binary alone is measured too, for comparison only.
#
#   scripts/bench/bench-deployed.sh [SIZE_MIB]        default 256 (the package is a little larger)
#
# What it does:
#   1. builds the server in release mode and starts it on a free loopback port with a temp data folder
#      (scripts/bench/bench-lib.sh), with `--accel-redirect` when deploy/nginx.conf has the internal file location;
#   2. releases a package of SIZE_MIB through the management API (a tour, a waypoint, a video, scan, build, approve,
#      push);
#   3. writes a plain-HTTP variant of deploy/nginx.conf that differs only in what a loopback run must change: the
#      `listen` lines (a free port, no TLS), the certificate lines dropped, the redirect-only port-80 server dropped,
#      the upstream's port, and the data and cache folders under the work folder. Every location, proxy_cache and
#      X-Accel-Redirect rule is the deployed file's own;
#   4. in the same nginx, a second server serves the same bytes as static files (the JSON answers saved from the
#      server, the released zip), `sendfile on`: the reference;
#   5. measures, each contender in turn:
#        - read routes (sites, a site's package list, one package, the catalog, the signing key): requests/second
#          with `wrk -t2 -c32 -d10s` through the deployed nginx, nginx static, and the binary alone;
#        - downloads: one client (`curl`, at least 15 turns) and 32 clients at once (aggregate MiB/s, BENCH_RUNS turns),
#          through the deployed nginx, nginx static, and the binary alone, one after the other in each turn; every
#          download is checked to be whole. The table gives the best MiB/s of each, and the ratio as the median of
#          the turns' own ratios (each turn's contenders ran back to back, so a busy moment of the shared machine
#          falls on both sides of a pair: a download of 256 MiB lasts about a tenth of a second, and the best of
#          each side alone can come from different moments).
# Goals (through deploy/nginx.conf): read routes >= 0.8x nginx static, downloads >= 0.9x at 1 and 32 clients. The
# binary alone has no goal. Verdicts are printed; the exit status is 0 unless something failed outright.
#
# Environment: BENCH_SCRATCH (SwiftPM build folder, default .build-bench), BENCH_WORK, BENCH_RUNS (default 3),
# BENCH_SKIP_BUILD=1, BENCH_WRK_SECONDS (default 10), NGINX (the nginx binary), KEEP=1 (keep the work folder).
set -euo pipefail

size_mib="${1:-256}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build-bench}"
runs="${BENCH_RUNS:-3}"
wrk_seconds="${BENCH_WRK_SECONDS:-10}"
for tool in curl python3 swift wrk sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done

if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-deployed.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
alone_pid=""
cleanup() {
  bench_stop_server
  if [[ -n "$alone_pid" ]] && kill -0 "$alone_pid" 2>/dev/null; then kill "$alone_pid"; wait "$alone_pid" 2>/dev/null || true; fi
  bench_stop_nginx
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The deployed file's internal location for X-Accel-Redirect, when it has one: the server is told to use it.
accel_prefix=$(sed -n 's/^ *location \(\/_trail_files\/\) *{.*/\1/p' "$root/deploy/nginx.conf" | head -1)
# The video below is random bytes, which no converter reads: the package ships it as it is.
BENCH_SERVE_FLAGS="--no-optimize-media${accel_prefix:+ --accel-redirect $accel_prefix}"
bench_build
bench_start_server

tour=$(bench_tour "Bench Tour")
waypoint=$(bench_waypoint "$tour" "Fish Lake" 44.40 -122.0)
video="$work/walk.mp4"
echo "writing a ${size_mib} MiB video ..."
{ printf '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2\x00\x00\x00\x08free'; head -c $(( size_mib * 1024 * 1024 - 32 )) /dev/urandom; } > "$video"
echo "uploading, scanning, building, releasing ..."
bench_upload "$tour" "$waypoint" "$video" video/mp4 walk.mp4 >/dev/null
rm -f "$video"
read -r package _ sha < <(bench_release "$tour")
zip="$data/packages/$package/1.zip"
bytes=$(stat -c %s "$zip")
[[ "$(sha256sum "$zip" | cut -d' ' -f1)" == "$sha" ]] || { echo "the released zip's SHA-256 is not the listed one"; exit 1; }
echo "released package $package: $bytes bytes"

# --- nginx: the deployed site file (plain HTTP) and the static reference ---------------------------------------
proxy_port=$(bench_free_port); static_port=$(bench_free_port)
static="$work/static"; conf="$work/nginx"
mkdir -p "$static/api" "$static/packages/$package" "$conf/cache"
# Each read route's answer saved as a file: /api/<route with / as _>.
routes=(sites sites/bench/packages "packages/$package" catalog signing-key)
static_name() { echo "${1//\//_}"; }
for route in "${routes[@]}"; do curl -fsS "$base/api/v1/$route" > "$static/api/$(static_name "$route")"; done
ln "$zip" "$static/packages/$package/1.zip" 2>/dev/null || cp "$zip" "$static/packages/$package/1.zip"
bench_deployed_nginx "$conf" "$proxy_port" "
  server {
    listen 127.0.0.1:$static_port;
    root $static;
    location /api/ { default_type application/json; }
    location /packages/ { types { } default_type application/zip; }
  }"
proxy="http://127.0.0.1:$proxy_port"; nstatic="http://127.0.0.1:$static_port"
for _ in $(seq 1 100); do curl -fsS -o /dev/null "$nstatic/api/sites" 2>/dev/null && break; sleep 0.1; done
cmp <(curl -fsS "$proxy/api/v1/sites/bench/packages") "$static/api/sites_bench_packages" \
  || { echo "the deployed nginx does not pass the package list on"; tail -5 "$conf/error.log"; exit 1; }
cat "$zip" > /dev/null  # in the page cache for every contender

# The binary alone: with X-Accel-Redirect its download answers carry no bytes, so a second server on the same data
# folder, without the flag, sends them itself.
alone="$base"
if [[ -n "$accel_prefix" ]]; then
  alone_port=$(bench_free_port)
  "$bin" serve --hostname 127.0.0.1 --port "$alone_port" --root "$root" --data "$data" --clamav-db "$work/signatures" --no-optimize-media \
    > "$work/alone.log" 2>&1 &
  alone_pid=$!
  alone="http://127.0.0.1:$alone_port"
  for _ in $(seq 1 200); do curl -fsS -o /dev/null "$alone/healthz" 2>/dev/null && break; sleep 0.1; done
fi

# --- measurements ----------------------------------------------------------------------------------------------
ours_url="$alone/api/v1/packages/$package/download"
proxy_url="$proxy/api/v1/packages/$package/download"
static_url="$nstatic/packages/$package/1.zip"
parallel_get() {  # URL N: N curls at once; sets secs; fails unless each got every byte
  local url="$1" n="$2" out="$work/curl.$RANDOM" i pids=() start end good
  start=$(bench_now)
  for i in $(seq 1 "$n"); do curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' "$url" >> "$out" & pids+=($!); done
  wait "${pids[@]}" || true
  end=$(bench_now); secs=$(bench_elapsed "$start" "$end")
  good=$(awk -v b="$bytes" '$1 == 200 && $2 == b' "$out" | wc -l); rm -f "$out"
  [[ "$good" == "$n" ]] || { echo "only $good of $n downloads of $url were complete"; exit 1; }
}
mibs() { awk -v b="$bytes" -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", b * n / 1048576 / s }'; }
downloads() {  # N TURNS: best aggregate MiB/s of the proxy, nginx static and the binary, and the median of the
  # turns' ratios proxy/static and binary/static
  local n="$1" turns="$2" best_p=0 best_s=0 best_b=0 p s b pairs=""
  for _ in $(seq 1 "$turns"); do
    parallel_get "$proxy_url" "$n"; p=$(mibs "$n" "$secs"); (( p > best_p )) && best_p=$p
    parallel_get "$static_url" "$n"; s=$(mibs "$n" "$secs"); (( s > best_s )) && best_s=$s
    parallel_get "$ours_url" "$n"; b=$(mibs "$n" "$secs"); (( b > best_b )) && best_b=$b
    pairs+="$p $s $b"$'\n'
  done
  echo "$best_p $best_s $best_b $(median_ratio 1 <<< "$pairs") $(median_ratio 3 <<< "$pairs")"
}
median_ratio() {  # COLUMN: the median over lines "p s b" of column/s
  awk -v c="$1" 'NF == 3 { printf "%.6f\n", $c / $2 }' | sort -n \
    | awk '{ r[NR] = $1 } END { printf "%.2f", (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2) }'
}
rps() { wrk -t2 -c32 -d"${wrk_seconds}s" "$1" | awk '/^Requests\/sec/ { printf "%.0f", $2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
met() { awk -v r="$1" -v g="$2" 'BEGIN { print (r >= g ? "yes" : "no") }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"
parallel_get "$proxy_url" 1; parallel_get "$static_url" 1; parallel_get "$ours_url" 1  # warm-up
echo "downloads, 1 client ..."
read -r p1 s1 b1 r1 rb1 < <(downloads 1 $(( runs > 15 ? runs : 15 )))
echo "downloads, 32 clients ..."
read -r p32 s32 b32 r32 rb32 < <(downloads 32 "$runs")
# What the route's decision costs a download behind nginx: the time to the first byte of the package (median of 21),
# through the deployed chain (nginx asks the server, then sends the file) and from nginx static.
ttfb() { for _ in $(seq 1 21); do curl -sS -o /dev/null -r 0-0 -w '%{time_starttransfer}\n' "$1"; done \
  | sort -n | awk '{ t[NR] = $1 } END { printf "%.1f", t[11] * 1000 }'; }
ttfb_p=$(ttfb "$proxy_url"); ttfb_s=$(ttfb "$static_url")

table=""
for route in "${routes[@]}"; do
  echo "GET /api/v1/$route ..."
  wrk -t2 -c32 -d2s "$proxy/api/v1/$route" > /dev/null  # warm-up (and nginx's proxy_cache, where it applies)
  p=$(rps "$proxy/api/v1/$route"); s=$(rps "$nstatic/api/$(static_name "$route")"); b=$(rps "$base/api/v1/$route")
  name="/api/v1/${route//$package/{id\}}"
  bench_result "deployed chain: GET $name, req/s" "$p" "nginx static $s" "$(ratio "$p" "$s")" ">= 0.8" "$(met "$(ratio "$p" "$s")" 0.8)"
  table+="| GET $name, requests/s | $p | $s | $(ratio "$p" "$s") ($(met "$(ratio "$p" "$s")" 0.8)) | $b | $(ratio "$b" "$s") |"$'\n'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_result "deployed chain: download, 1 client" "$p1 MiB/s" "nginx static $s1 MiB/s" "$r1" ">= 0.9" "$(met "$r1" 0.9)"
bench_result "deployed chain: download, 32 clients" "$p32 MiB/s" "nginx static $s32 MiB/s" "$r32" ">= 0.9" "$(met "$r32" 0.9)"

cat <<EOF

Deployed chain: deploy/nginx.conf (plain HTTP on loopback) in front of the release binary$( [[ -n "$accel_prefix" ]] && echo ", X-Accel-Redirect $accel_prefix" ),
against nginx static in the same run; $(( bytes / 1048576 )) MiB package, $(nproc) cores, wrk -t2 -c32 -d${wrk_seconds}s
| measurement | through deploy/nginx.conf | nginx static | ratio (goal met) | binary alone | binary / static |
|---|---|---|---|---|---|
${table}| download, 1 client, best MiB/s; median of the turns' ratios | $p1 | $s1 | $r1 ($(met "$r1" 0.9)) | $b1 | $rb1 |
| download, 32 clients, best aggregate MiB/s; median of the turns' ratios | $p32 | $s32 | $r32 ($(met "$r32" 0.9)) | $b32 | $rb32 |
Time to the first byte of a download (median of 21): ${ttfb_p} ms through deploy/nginx.conf, ${ttfb_s} ms from nginx static.
Goals: read routes >= 0.8, downloads >= 0.9 (through deploy/nginx.conf). The binary alone has no goal.
EOF
