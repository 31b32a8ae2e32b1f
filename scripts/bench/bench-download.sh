#!/usr/bin/env bash
# Download benchmark: the mobile API serving one large released package, next to Debian's nginx serving
# the same file from the same disk, on loopback.
#
#   scripts/bench/bench-download.sh [SIZE_MIB]        default 512 (the package is a little larger)
#
# What it does:
#   1. builds the server in release mode (`swift build -c release --product trail-companion`; the build
#      folder is BENCH_SCRATCH, default the repository's .build);
#   2. starts it on a free 127.0.0.1 port with a temp data folder and a signature folder holding the test
#      EICAR signature; creates an author (manager) and a reviewer with the CLI, and their tokens;
#   3. through the management API: a tour with a frame and a waypoint, a SIZE_MIB video (random bytes after an
#      `ftyp` box) uploaded as multipart, scanned, submitted, built, approved by the reviewer and pushed by the
#      author; the released zip is `data/packages/<id>/1.zip`;
#   4. starts nginx (a temp config: `worker_processes auto`, `sendfile on`, loopback, another free port) with
#      that packages folder as its root, and the site's package list saved as a static JSON file;
#   5. measures, each contender in turn, each figure the best of BENCH_RUNS runs (default 3):
#        - one client: `curl -o /dev/null` of the whole file, MiB/s (server and nginx in turn, at least 9 turns);
#        - 32 clients: 32 curls at once, each the whole file; aggregate MiB/s = bytes / wall time;
#        - the server's peak RSS growth (VmRSS and RssAnon from /proc/<pid>/status, sampled every 20 ms)
#          during 100 concurrent whole-file downloads, once with unthrottled clients and once with clients
#          limited to 8 MiB/s each (slow phones: the server must not buffer what they cannot take yet);
#        - requests/second with `wrk` (BENCH_WRK_THREADS threads, default 2, 64 connections, 10 s) for the read
#          routes every app start and update check asks: the package list, one package's metadata, the catalog,
#          and the list again with `If-None-Match` (304), each next to nginx serving the same bytes as a static file
#          (and nginx's 304 for its own ETag);
#      every download is checked to be the whole file (size from curl's %{size_download}).
# Goals: downloads at least 0.9x nginx's with 1 and 32 clients, the read routes at least 0.5x nginx's
# requests/second; RSS growth under 100 MiB with 100 downloads. Verdicts
# are printed; the exit status is 0 unless something failed outright (a missed goal is not a failure here).
#
# Environment: BENCH_SCRATCH (SwiftPM build folder), BENCH_WORK (work folder, default a new one under
# ${TMPDIR:-/tmp}, removed at the end unless KEEP=1), BENCH_RUNS (default 3), BENCH_SKIP_BUILD=1,
# NGINX (path of the nginx binary, default the one on PATH or /usr/sbin/nginx).
set -euo pipefail

size_mib="${1:-512}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
runs="${BENCH_RUNS:-3}"
wrk_threads="${BENCH_WRK_THREADS:-2}"
nginx_bin="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
for tool in curl python3 swift wrk sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
if [[ ! -x "$nginx_bin" ]]; then
  echo "nginx is missing: apt-get install -y nginx-light" >&2
  exit 2
fi

if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-download.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
nginx_pid=""
cleanup() {
  bench_stop_server
  if [[ -n "$nginx_pid" ]] && kill -0 "$nginx_pid" 2>/dev/null; then kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; fi
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
free_port() { bench_free_port; }
now() { bench_now; }
elapsed() { bench_elapsed "$@"; }

bench_build
# The video below is random bytes, which no converter reads: the package ships it as it is.
BENCH_SERVE_FLAGS="--no-optimize-media"
bench_start_server

# --- a released package of at least SIZE_MIB ------------------------------------------------------
tour=$(bench_tour "Bench Tour")
waypoint=$(bench_waypoint "$tour" "Fish Lake" 44.40 -122.0)
video="$work/walk.mp4"
echo "writing a ${size_mib} MiB video ..."
{ printf '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2\x00\x00\x00\x08free'; head -c $(( size_mib * 1024 * 1024 - 32 )) /dev/urandom; } > "$video"
echo "uploading and scanning ..."
bench_upload "$tour" "$waypoint" "$video" video/mp4 walk.mp4 >/dev/null
rm -f "$video"
echo "building and releasing ..."
read -r package _ sha < <(bench_release "$tour")
zip="$data/packages/$package/1.zip"
bytes=$(stat -c %s "$zip")
[[ "$(sha256sum "$zip" | cut -d' ' -f1)" == "$sha" ]] || { echo "the released zip's SHA-256 is not the listed one"; exit 1; }
echo "released package $package: $bytes bytes ($(( bytes / 1048576 )) MiB)"

# --- nginx, same file, same JSON -----------------------------------------------------------------
nginx_port=$(free_port)
static="$work/static"
mkdir -p "$static/api/v1/sites/bench" "$static/api/v1/packages" "$work/nginx"
curl -fsS "$base/api/v1/sites/bench/packages" > "$static/api/v1/sites/bench/packages"
curl -fsS "$base/api/v1/packages/$package" > "$static/api/v1/packages/$package"
curl -fsS "$base/api/v1/catalog" > "$static/api/v1/catalog"
ln -s "$data/packages" "$static/packages"
# Workers read the files as the user running this script (not www-data, which cannot enter the temp folder).
nginx_user=""; [[ $EUID == 0 ]] && nginx_user="user root root;"
cat > "$work/nginx/nginx.conf" <<EOF
$nginx_user
worker_processes auto;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  default_type application/json;
  server {
    listen 127.0.0.1:$nginx_port;
    root $static;
    location /packages/ { types { } default_type application/zip; }
  }
}
EOF
"$nginx_bin" -c "$work/nginx/nginx.conf" -p "$work/nginx" > "$work/nginx/stdout.log" 2>&1 &
nginx_pid=$!
nbase="http://127.0.0.1:$nginx_port"
for _ in $(seq 1 100); do curl -fsS -o /dev/null "$nbase/api/v1/sites/bench/packages" 2>/dev/null && break; sleep 0.1; done
cmp <(curl -fsS "$nbase/api/v1/sites/bench/packages") "$static/api/v1/sites/bench/packages" || { echo "nginx does not serve the JSON"; tail -5 "$work/nginx/error.log"; exit 1; }

ours_url="$base/api/v1/packages/$package/download"
nginx_url="$nbase/packages/$package/1.zip"
[[ "$(curl -fsS -I "$nginx_url" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-length" { print $2 }')" == "$bytes" ]] || { echo "nginx does not serve the zip"; exit 1; }
cat "$zip" > /dev/null  # in the page cache for both

# --- measurements --------------------------------------------------------------------------------
# Downloads `url` with `n` parallel curls (extra curl options after); sets secs; fails unless each got every byte.
parallel_get() {
  local url="$1" n="$2"; shift 2
  local out="$work/curl.$RANDOM" i pids=()
  local start; start=$(now)
  for i in $(seq 1 "$n"); do
    curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' "$@" "$url" >> "$out" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  local end; end=$(now)
  secs=$(elapsed "$start" "$end")
  local good; good=$(awk -v b="$bytes" '$1 == 200 && $2 == b' "$out" | wc -l)
  rm -f "$out"
  [[ "$good" == "$n" ]] || { echo "only $good of $n downloads were complete"; exit 1; }
}

# Peak VmRSS / RssAnon growth (KiB) of the server while "$@" runs; sets rss_vm, rss_anon, rss_base, secs.
sampler_pid=""
measure_rss() {
  local stop="$work/stop.$RANDOM" out="$work/rss.$RANDOM"
  python3 - "$server_pid" "$stop" > "$out" <<'PY' &
import os, sys, time
pid, stop = sys.argv[1], sys.argv[2]
def read():
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                values[key] = int(rest.split()[0])
    return values["VmRSS"], values["RssAnon"]
base = read(); peak = base
while not os.path.exists(stop):
    now = read(); peak = (max(peak[0], now[0]), max(peak[1], now[1]))
    time.sleep(0.02)
now = read(); peak = (max(peak[0], now[0]), max(peak[1], now[1]))
print(peak[0] - base[0], peak[1] - base[1], base[0])
PY
  sampler_pid=$!
  sleep 0.3
  "$@"
  touch "$stop"; wait "$sampler_pid"; sampler_pid=""
  read -r rss_vm rss_anon rss_base < "$out"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"
# Warm-up: one download each.
parallel_get "$ours_url" 1; parallel_get "$nginx_url" 1

# Both contenders in turn, run by run, so that both see the same moments of a shared machine; the best of each.
# One download is short (a tenth of a second for 256 MiB), so the single client gets at least 9 turns.
interleaved() {
  local n="$1" turns="$2" best_ours=0 best_nginx=0 rate run
  for run in $(seq 1 "$turns"); do
    parallel_get "$ours_url" "$n"; rate=$(awk -v b="$bytes" -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", b * n / 1048576 / s }')
    (( rate > best_ours )) && best_ours=$rate
    parallel_get "$nginx_url" "$n"; rate=$(awk -v b="$bytes" -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", b * n / 1048576 / s }')
    (( rate > best_nginx )) && best_nginx=$rate
  done
  echo "$best_ours $best_nginx"
}
echo "1 client ..."
read -r ours_1 nginx_1 < <(interleaved 1 $(( runs > 9 ? runs : 9 )))
echo "32 clients ..."
read -r ours_32 nginx_32 < <(interleaved 32 "$runs")

echo "100 concurrent downloads, RSS ..."
measure_rss parallel_get "$ours_url" 100
fast_vm=$rss_vm; fast_anon=$rss_anon; fast_base=$rss_base; fast_secs=$secs
measure_rss parallel_get "$ours_url" 100 --limit-rate 8M
slow_vm=$rss_vm; slow_anon=$rss_anon; slow_secs=$secs

echo "read routes, requests/second ..."
wrk_rps() {
  wrk -t"$wrk_threads" -c64 -d10s "$@" | awk '/^Requests\/sec/ { printf "%.0f", $2 }'
}
etag_of() { curl -fsS -D - -o /dev/null "$1" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }'; }
wrk -t"$wrk_threads" -c64 -d2s "$base/api/v1/sites/bench/packages" > /dev/null  # warm-up
ours_rps=$(wrk_rps "$base/api/v1/sites/bench/packages")
nginx_rps=$(wrk_rps "$nbase/api/v1/sites/bench/packages")
ours_detail_rps=$(wrk_rps "$base/api/v1/packages/$package")
nginx_detail_rps=$(wrk_rps "$nbase/api/v1/packages/$package")
ours_catalog_rps=$(wrk_rps "$base/api/v1/catalog")
nginx_catalog_rps=$(wrk_rps "$nbase/api/v1/catalog")
ours_etag=$(etag_of "$base/api/v1/sites/bench/packages"); nginx_etag=$(etag_of "$nbase/api/v1/sites/bench/packages")
[[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $ours_etag" "$base/api/v1/sites/bench/packages")" == 304 ]] || { echo "no 304 from the server"; exit 1; }
[[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $nginx_etag" "$nbase/api/v1/sites/bench/packages")" == 304 ]] || { echo "no 304 from nginx"; exit 1; }
ours_304_rps=$(wrk_rps -H "If-None-Match: $ours_etag" "$base/api/v1/sites/bench/packages")
nginx_304_rps=$(wrk_rps -H "If-None-Match: $nginx_etag" "$nbase/api/v1/sites/bench/packages")
json_bytes=$(stat -c %s "$static/api/v1/sites/bench/packages")
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { awk -v r="$1" -v g="$2" 'BEGIN { print (r >= g ? "goal met" : "goal missed") }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
yes_no() { awk -v r="$1" -v g="$2" 'BEGIN { print (r >= g ? "yes" : "no") }'; }
peak_vm=$(( fast_vm > slow_vm ? fast_vm : slow_vm ))
bench_result "download, 1 client, $(( bytes / 1048576 )) MiB" "$ours_1 MiB/s" "nginx $nginx_1 MiB/s" "$(ratio "$ours_1" "$nginx_1")" ">= 0.9" "$(yes_no "$(ratio "$ours_1" "$nginx_1")" 0.9)"
bench_result "download, 32 clients" "$ours_32 MiB/s" "nginx $nginx_32 MiB/s" "$(ratio "$ours_32" "$nginx_32")" ">= 0.9" "$(yes_no "$(ratio "$ours_32" "$nginx_32")" 0.9)"
bench_result "package list, req/s" "$ours_rps" "nginx static $nginx_rps" "$(ratio "$ours_rps" "$nginx_rps")" ">= 0.5" "$(yes_no "$(ratio "$ours_rps" "$nginx_rps")" 0.5)"
bench_result "package metadata, req/s" "$ours_detail_rps" "nginx static $nginx_detail_rps" "$(ratio "$ours_detail_rps" "$nginx_detail_rps")" ">= 0.5" "$(yes_no "$(ratio "$ours_detail_rps" "$nginx_detail_rps")" 0.5)"
bench_result "catalog, req/s" "$ours_catalog_rps" "nginx static $nginx_catalog_rps" "$(ratio "$ours_catalog_rps" "$nginx_catalog_rps")" ">= 0.5" "$(yes_no "$(ratio "$ours_catalog_rps" "$nginx_catalog_rps")" 0.5)"
bench_result "package list 304, req/s" "$ours_304_rps" "nginx 304 $nginx_304_rps" "$(ratio "$ours_304_rps" "$nginx_304_rps")" ">= 0.5" "$(yes_no "$(ratio "$ours_304_rps" "$nginx_304_rps")" 0.5)"
bench_result "RSS growth, 100 downloads" "$(mib "$peak_vm") MiB" "-" "-" "< 100 MiB" "$( (( peak_vm < 102400 )) && echo yes || echo no)"

cat <<EOF

Download benchmark: $(( bytes / 1048576 )) MiB package ($bytes bytes), loopback, $(nproc) cores, best of $runs runs
| measurement | trail-companion | nginx | ratio |
|---|---|---|---|
| 1 client, MiB/s | $ours_1 | $nginx_1 | $(ratio "$ours_1" "$nginx_1") ($(verdict "$(ratio "$ours_1" "$nginx_1")" 0.9)) |
| 32 clients, aggregate MiB/s | $ours_32 | $nginx_32 | $(ratio "$ours_32" "$nginx_32") ($(verdict "$(ratio "$ours_32" "$nginx_32")" 0.9)) |
| GET /api/v1/sites/bench/packages ($json_bytes B), requests/s | $ours_rps | $nginx_rps (static file) | $(ratio "$ours_rps" "$nginx_rps") ($(verdict "$(ratio "$ours_rps" "$nginx_rps")" 0.5)) |
| GET /api/v1/packages/{id}, requests/s | $ours_detail_rps | $nginx_detail_rps (static file) | $(ratio "$ours_detail_rps" "$nginx_detail_rps") ($(verdict "$(ratio "$ours_detail_rps" "$nginx_detail_rps")" 0.5)) |
| GET /api/v1/catalog, requests/s | $ours_catalog_rps | $nginx_catalog_rps (static file) | $(ratio "$ours_catalog_rps" "$nginx_catalog_rps") ($(verdict "$(ratio "$ours_catalog_rps" "$nginx_catalog_rps")" 0.5)) |
| package list with If-None-Match (304), requests/s | $ours_304_rps | $nginx_304_rps | $(ratio "$ours_304_rps" "$nginx_304_rps") ($(verdict "$(ratio "$ours_304_rps" "$nginx_304_rps")" 0.5)) |

| 100 concurrent downloads | peak VmRSS growth | peak RssAnon growth | wall time |
|---|---|---|---|
| unthrottled clients | $(mib "$fast_vm") MiB | $(mib "$fast_anon") MiB | ${fast_secs} s |
| clients limited to 8 MiB/s | $(mib "$slow_vm") MiB | $(mib "$slow_anon") MiB | ${slow_secs} s |
(server RSS before: $(mib "$fast_base") MiB; goal: growth under 100 MiB: $(awk -v a="$fast_vm" -v b="$slow_vm" 'BEGIN { print ((a > b ? a : b) < 102400 ? "goal met" : "goal missed") }'))
EOF
