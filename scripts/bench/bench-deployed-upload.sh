#!/usr/bin/env bash
# Uploads through the deployed chain: the server behind nginx running the project's own deploy/nginx.conf (its
# upload location streams bodies through, `proxy_request_buffering off`), against the least work an upload can do, in
# the same run.
#
#   scripts/bench/bench-deployed-upload.sh [SIZE_MIB]        default 512
#
# What it does:
#   1. builds the server in release mode and starts it on a temp data folder with an author, a site, a tour
#      (scripts/bench/bench-lib.sh), and nginx with a plain-HTTP variant of deploy/nginx.conf in front of it
#      (bench_deployed_nginx: only the listen, certificate, upstream port and folder lines differ); the same nginx has
#      a second server with a `dav_methods PUT` location, the browser's reference;
#   2. writes SIZE_MIB of random bytes after a PNG signature (so the server accepts it), read once into the page cache;
#   3. measures, best of BENCH_RUNS (default 3) each, contenders in turn:
#        - copy+hash: `tee copy < file | openssl dgst -sha256` (copying and hashing in one pass, what an upload
#          cannot skip);
#        - a multipart upload (`curl -F`) through nginx;
#        - a tus upload in one PATCH (`curl -T`; the upload is created outside the timing) through nginx;
#        - the panel's uploader (Public/js/uploader.js, tus in PATCHes of 8 to 64 MiB) in headless Chromium, through nginx,
#          from choosing the file to the row saying "Uploaded" (scripts/bench/load/browser_upload.py), to a new waypoint
#          each time;
#        - the same browser `PUT`ting the same file to nginx's dav location (scripts/bench/load/browser_put.py): Chromium's
#          own ceiling on this machine.
#      The server's SHA-256 of every upload is checked against the file's, after its malware scan ended (outside the
#      timing, so no contender shares the two cores with the scan of the one before).
# Goals: multipart and tus >= 0.5 x copy+hash; the panel's uploader >= 0.8 x the browser's PUT to nginx. Verdicts
# are printed; the exit status is 0 unless something failed outright.
#
# Needs nginx-light, curl, openssl, and the browser suite's tools (Debian's chromium and chromium-driver, selenium in
# .venv: scripts/install-deps.sh --test). Environment: BENCH_SCRATCH (default .build-bench), BENCH_WORK, BENCH_RUNS,
# BENCH_SKIP_BUILD=1, BENCH_BIN, NGINX, KEEP=1.
set -euo pipefail

size_mib="${1:-512}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build-bench}"
runs="${BENCH_RUNS:-3}"
python="$root/.venv/bin/python"
[[ -x "$python" ]] || { echo "no .venv: run scripts/install-deps.sh --test" >&2; exit 2; }
for tool in curl python3 swift openssl sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-deployed-upload.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
cleanup() {
  bench_stop_server
  bench_stop_nginx
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Random bytes after a PNG signature are no picture a converter reads: no phone-sized copy is attempted.
BENCH_SERVE_FLAGS="--no-optimize-media"
bench_build
bench_start_server
tour=$(bench_tour "Upload Bench")
proxy_port=$(bench_free_port); dav_port=$(bench_free_port)
conf="$work/nginx"; dav="$work/dav"
mkdir -p "$dav/dav"
echo '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>PUT</title></head><body></body></html>' > "$dav/index.html"
bench_deployed_nginx "$conf" "$proxy_port" "
  server {
    listen 127.0.0.1:$dav_port;
    root $dav;
    location /dav/ {
      dav_methods PUT;
      client_max_body_size 0;
      client_body_buffer_size 1m;
    }
  }"
proxy="http://127.0.0.1:$proxy_port"; davurl="http://127.0.0.1:$dav_port"

file="$work/upload.png"
echo "writing a ${size_mib} MiB file ..."
{ printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR'; head -c $(( size_mib * 1048576 - 16 )) /dev/urandom; } > "$file"
bytes=$(stat -c %s "$file")
sha=$(sha256sum "$file" | cut -d' ' -f1)
sync; cat "$file" > /dev/null  # written back, and in the page cache for every contender

rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
met() { awk -v r="$1" -v g="$2" 'BEGIN { print (r >= g ? "yes" : "no") }'; }
# The server's SHA-256 of an upload, once its scan ended: the next contender must not share the cores with a scan.
asset_sha() {
  local status
  for _ in $(seq 1 3000); do
    status=$(api "$author" "$base/api/v1/manage/assets/$1" | json "['scanStatus']")
    [[ "$status" != pending ]] && break
    sleep 0.1
  done
  api "$author" "$base/api/v1/manage/assets/$1" | json "['sha256']"
}

copy_hash() {
  local start end; start=$(bench_now)
  tee "$work/copy" < "$file" | openssl dgst -sha256 > /dev/null
  end=$(bench_now); rm -f "$work/copy"; sync
  rate "$(bench_elapsed "$start" "$end")"
}
multipart() {  # waypoint -> MiB/s
  local start end answer; start=$(bench_now)
  answer=$(curl -sS --fail-with-body -H "Authorization: Bearer $author" -H 'Expect:' \
    -F "file=@$file;type=image/png;filename=bench.png" "$proxy/api/v1/manage/tours/$tour/waypoints/$1/assets")
  end=$(bench_now)
  [[ "$(asset_sha "$(echo "$answer" | json "['id']")")" == "$sha" ]] || { echo "multipart: the server's SHA-256 differs" >&2; exit 1; }
  rate "$(bench_elapsed "$start" "$end")"
}
tus_one_patch() {  # waypoint -> MiB/s
  local b64 location start end asset
  b64() { printf '%s' "$1" | base64 -w0; }
  location=$(curl -fsS -D - -o /dev/null -X POST -H "Authorization: Bearer $author" -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $bytes" \
    -H "Upload-Metadata: tour $(b64 "$tour"),waypoint $(b64 "$1"),filename $(b64 bench.png)" "$proxy/api/v1/manage/uploads" |
    tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }')
  start=$(bench_now)
  curl -fsS -D "$work/tus.headers" -o /dev/null -X PATCH -T "$file" -H "Authorization: Bearer $author" -H 'Tus-Resumable: 1.0.0' \
    -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' -H 'Expect:' "$proxy$location"
  end=$(bench_now)
  asset=$(tr -d '\r' < "$work/tus.headers" | awk 'tolower($1) == "asset-id:" { print $2 }')
  [[ "$(asset_sha "$asset")" == "$sha" ]] || { echo "tus: the server's SHA-256 differs" >&2; exit 1; }
  rate "$(bench_elapsed "$start" "$end")"
}
panel() {  # waypoint -> MiB/s
  local result status seconds asset
  result=$("$python" "$root/scripts/bench/load/browser_upload.py" "$proxy" author@trail.test 'bench password 1234' \
    "/tours/$tour/waypoints/$1" "$file" | tail -1)
  status=$(printf '%s' "$result" | json "['status']"); seconds=$(printf '%s' "$result" | json "['seconds']")
  [[ "$status" == Uploaded* ]] || { echo "the panel's upload failed: $status" >&2; exit 1; }
  asset=$(api "$author" "$base/api/v1/manage/tours/$tour" | python3 -c "
import json, sys
tour = json.load(sys.stdin)
print(next(a['id'] for w in tour['waypoints'] if w['id'] == $1 for a in w.get('assets', [])))")
  [[ "$(asset_sha "$asset")" == "$sha" ]] || { echo "panel: the server's SHA-256 differs" >&2; exit 1; }
  rate "$seconds"
}
browser_put() {
  local result
  rm -f "$dav/dav/upload.bin"
  result=$("$python" "$root/scripts/bench/load/browser_put.py" "$davurl/index.html" "$file" | tail -1)
  [[ "$(printf '%s' "$result" | json "['status']")" =~ ^20[14]$ ]] || { echo "the browser's PUT failed: $result" >&2; exit 1; }
  [[ "$(sha256sum "$dav/dav/upload.bin" | cut -d' ' -f1)" == "$sha" ]] || { echo "the PUT file differs" >&2; exit 1; }
  rm -f "$dav/dav/upload.bin"; sync
  rate "$(printf '%s' "$result" | json "['seconds']")"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"
best_ch=0; best_mp=0; best_tus=0; best_panel=0; best_put=0
keep_best() { local name="$1" value="$2"; (( value > ${!name} )) && printf -v "$name" '%s' "$value"; return 0; }
for run in $(seq 1 "$runs"); do
  echo "turn $run of $runs ..."
  keep_best best_ch "$(copy_hash)"
  keep_best best_mp "$(multipart "$(bench_waypoint "$tour" "Multipart $run" 44.40 -122.01)")"
  keep_best best_tus "$(tus_one_patch "$(bench_waypoint "$tour" "Tus $run" 44.40 -122.02)")"
  keep_best best_put "$(browser_put)"
  keep_best best_panel "$(panel "$(bench_waypoint "$tour" "Panel $run" 44.40 -122.03)")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

r_mp=$(ratio "$best_mp" "$best_ch"); r_tus=$(ratio "$best_tus" "$best_ch"); r_panel=$(ratio "$best_panel" "$best_put")
bench_result "deployed chain: multipart upload, $size_mib MiB" "$best_mp MiB/s" "copy+hash $best_ch MiB/s" "$r_mp" ">= 0.5" "$(met "$r_mp" 0.5)"
bench_result "deployed chain: tus upload in one PATCH, $size_mib MiB" "$best_tus MiB/s" "copy+hash $best_ch MiB/s" "$r_tus" ">= 0.5" "$(met "$r_tus" 0.5)"
bench_result "deployed chain: the panel's tus upload in Chromium, $size_mib MiB" "$best_panel MiB/s" "Chromium PUT to nginx $best_put MiB/s" "$r_panel" ">= 0.8" "$(met "$r_panel" 0.8)"
cat <<EOF

Uploads through deploy/nginx.conf (plain HTTP on loopback) to the release binary; $size_mib MiB, $(nproc) cores, best of $runs
| measurement | MiB/s | reference, MiB/s | ratio (goal met) |
|---|---|---|---|
| multipart (curl -F) | $best_mp | copy+hash $best_ch | $r_mp (>= 0.5: $(met "$r_mp" 0.5)) |
| tus, one PATCH (curl -T) | $best_tus | copy+hash $best_ch | $r_tus (>= 0.5: $(met "$r_tus" 0.5)) |
| the panel's uploader in Chromium (tus, PATCHes of 8–64 MiB) | $best_panel | Chromium PUT to nginx $best_put | $r_panel (>= 0.8: $(met "$r_panel" 0.8)) |
EOF
