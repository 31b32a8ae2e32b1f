#!/usr/bin/env bash
# Upload benchmark: one large file through each way in (multipart form POST, tus), against a release build
# of the real server, next to `cp` of the same file on the same disk.
#
#   scripts/bench/bench-upload.sh [SIZE_MIB]        default 1024 (1 GiB)
#
# What it does:
#   1. builds the server in release mode (`swift build -c release --product trail-companion`; the build
#      folder is BENCH_SCRATCH, default the repository's .build);
#   2. starts it on a free 127.0.0.1 port with a temp data folder and a signature folder holding the test
#      EICAR signature (the same line as EICAR.signatureLine), after creating a user, a site and a token
#      with the CLI and a tour and waypoint through the management API;
#   3. writes a SIZE_MIB file of random bytes with a PNG header in the same temp folder, and times, best of
#      three each, with the file written back and in the page cache first: `cp` of it, `cp` followed by `sync`
#      of the copy (the server fsyncs every upload), `openssl dgst -sha256` of it (hashing alone, the same SHA-NI
#      code as the server's BoringSSL) and `tee copy < file | openssl dgst -sha256` ("copy+hash": copying and
#      hashing in one pass, the least work an upload that hashes its bytes can do);
#   4. uploads it BENCH_RUNS times through each way in: `curl -F` (multipart, field `file`), a small Python tus
#      client (BENCH_CHUNK_MIB PATCHes over one keep-alive connection) and `curl -X PATCH -T` (tus, the whole
#      file in one PATCH); keeps the best time with the server's CPU seconds in that run, and the highest
#      peak RSS growth (VmRSS and RssAnon from /proc/<pid>/status every 20 ms, minus the value just before);
#   5. checks that the server's SHA-256 of each upload is the file's, and times the scan of the first of each
#      (in-process libclamav).
# Goals: throughput at least half of cp's, RSS growth under 64 MiB; the ratio to copy+hash is printed
# too (half of cp is out of reach of anything that hashes on a CPU where SHA-256 runs below that: see
# BENCHMARKS.md). The exit status is 0 unless something failed outright (a goal missed is not a failure).
#
# Environment: BENCH_SCRATCH (SwiftPM build folder), BENCH_WORK (work folder, default a new one under
# ${TMPDIR:-/tmp}, removed at the end unless KEEP=1), BENCH_CHUNK_MIB (tus chunk size, default 16),
# BENCH_RUNS (uploads per way in, default 3), BENCH_SKIP_BUILD=1 (use the binary already built),
# BENCH_BIN (measure this server binary instead, for A/B runs of two builds), BENCH_PERF=<folder> (record each
# upload with `perf record -g -a` into <folder>/<name>.perf.data; the timings then include perf's cost).
set -euo pipefail

size_mib="${1:-1024}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=bench-result.sh
source "$root/scripts/bench/bench-result.sh"
scratch="${BENCH_SCRATCH:-$root/.build}"
chunk_mib="${BENCH_CHUNK_MIB:-16}"
for tool in curl python3 swift sha256sum openssl; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done

if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-upload.XXXXXX")"; fi
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; fi
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- build ---------------------------------------------------------------------------------------
if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
  echo "building (release) in $scratch ..."
  (cd "$root" && swift build -c release --product trail-companion --scratch-path "$scratch" 2>&1 | tail -2)
fi
bin="${BENCH_BIN:-$(cd "$root" && swift build -c release --scratch-path "$scratch" --show-bin-path)/trail-companion}"
[[ -x "$bin" ]] || { echo "no binary at $bin" >&2; exit 1; }

# --- data folder, signatures, account -------------------------------------------------------------
data="$work/data"; sigs="$work/signatures"
mkdir -p "$data" "$sigs"
hex=$(printf '%s' 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE' | od -An -tx1 | tr -d ' \n')
printf 'Trail.Test.EICAR:0:*:%s\n' "$hex" > "$sigs/trail-test-eicar.ndb"
cli() { "$bin" "$@" --root "$root" --data "$data"; }
cli user create --email bench@trail.test --name Bench --password 'bench password 1234' --admin >/dev/null
cli site create --slug bench --name "Bench District" >/dev/null
cli member add --site bench --email bench@trail.test --role manager >/dev/null
token="$(cli token create --email bench@trail.test | tail -1)"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
base="http://127.0.0.1:$port"
"$bin" serve --hostname 127.0.0.1 --port "$port" --root "$root" --data "$data" --clamav-db "$sigs" > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do curl -fsS "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$base/healthz" >/dev/null || { echo "server did not start:"; cat "$work/server.log"; exit 1; }

api() { curl -fsS -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
tour=$(api -X POST "$base/api/v1/manage/tours" -d '{"site": "bench", "name": "Bench Tour", "description": ""}' | json "['id']")
api -X PATCH "$base/api/v1/manage/tours/$tour" -d '{"frame": {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}}' >/dev/null
waypoint=$(api -X POST "$base/api/v1/manage/tours/$tour/waypoints" \
  -d '{"name": "Fish Lake", "latitude": 44.40, "longitude": -122.0, "description": ""}' | json "['id']")

# --- the file ------------------------------------------------------------------------------------
file="$work/upload.png"
echo "writing a ${size_mib} MiB file ..."
{ printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR'; head -c $(( size_mib * 1024 * 1024 - 16 )) /dev/urandom; } > "$file"
bytes=$(stat -c %s "$file")
sha=$(sha256sum "$file" | cut -d' ' -f1)
cat "$file" > /dev/null  # in the page cache for every contender

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
mibs() { awk -v n="$bytes" -v s="$1" 'BEGIN { printf "%.0f", n / 1048576 / s }'; }

# --- RSS sampler ---------------------------------------------------------------------------------
# Prints "<VmRSS peak growth KiB> <RssAnon peak growth KiB>" when its stop file appears.
sample_rss() {
  python3 - "$server_pid" "$1" <<'PY'
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
}

# CPU time the server has used so far, in clock ticks (user + system, /proc/<pid>/stat fields 14 and 15).
server_cpu() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }

# Runs "$@" while sampling; sets rss_vm, rss_anon (KiB), secs and cpu (the server's CPU seconds meanwhile).
measure() {
  local stop="$work/stop.$RANDOM" out="$work/rss.$RANDOM"
  sample_rss "$stop" > "$out" &
  local sampler=$!
  sleep 0.2
  local cpu_before; cpu_before=$(server_cpu)
  local start; start=$(now)
  local perf=""
  if [[ -n "${BENCH_PERF:-}" ]]; then
    perf record -q -F 499 -g -a -o "$BENCH_PERF/$1.perf.data" 2>/dev/null & perf=$!
    sleep 1
  fi
  "$@"
  if [[ -n "$perf" ]]; then kill -INT "$perf"; wait "$perf" || true; fi
  local end; end=$(now)
  touch "$stop"; wait "$sampler"
  read -r rss_vm rss_anon rss_base < "$out"
  secs=$(elapsed "$start" "$end")
  cpu=$(awk -v a="$cpu_before" -v b="$(server_cpu)" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }')
}

wait_scanned() {  # asset id -> prints the seconds until its status is not pending, and the status
  local start; start=$(now)
  local status=pending
  for _ in $(seq 1 6000); do
    status=$(api "$base/api/v1/manage/assets/$1" | json "['scanStatus']")
    [[ "$status" != pending ]] && break
    sleep 0.1
  done
  echo "$(elapsed "$start" "$(now)") $status"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"

# --- cp ------------------------------------------------------------------------------------------
# Fair to cp: the generated file is written back first (else the first copy competes with that writeback) and
# read once into the page cache, as the uploads' clients read it; then the best of three runs of each.
sync; cat "$file" > /dev/null
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
cp_secs=""; cp_sync_secs=""
for _ in 1 2 3; do
  start=$(now); cp "$file" "$work/copy.bin"; end=$(now); cp_secs=$(best "$cp_secs" "$(elapsed "$start" "$end")")
  rm -f "$work/copy.bin"; sync
  start=$(now); cp "$file" "$work/copy.bin"; sync "$work/copy.bin"; end=$(now)
  cp_sync_secs=$(best "$cp_sync_secs" "$(elapsed "$start" "$end")")
  rm -f "$work/copy.bin"; sync
done

# What the server must do at the least: hash every byte while storing it. `openssl dgst -sha256` hashes with the
# same SHA-NI code path as the server's BoringSSL (coreutils' sha256sum does not use SHA-NI and is several times
# slower); `tee copy | openssl dgst -sha256` copies and hashes in one pass, as an upload does. Best of three each.
sha_secs=""; tee_secs=""
for _ in 1 2 3; do
  start=$(now); openssl dgst -sha256 "$file" > /dev/null; end=$(now); sha_secs=$(best "$sha_secs" "$(elapsed "$start" "$end")")
  start=$(now); tee "$work/copy.bin" < "$file" | openssl dgst -sha256 > /dev/null; end=$(now)
  tee_secs=$(best "$tee_secs" "$(elapsed "$start" "$end")")
  rm -f "$work/copy.bin"; sync
done

# --- the uploads ----------------------------------------------------------------------------------
# Each upload function leaves the new asset's id in $work/asset.id.
multipart_upload() {
  local status
  status=$(curl -sS -o "$work/multipart.json" -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Expect:' \
    -F "file=@$file;type=image/png;filename=bench.png" "$base/api/v1/manage/tours/$tour/waypoints/$waypoint/assets")
  [[ "$status" == 201 ]] || { echo "multipart upload failed: $status $(cat "$work/multipart.json")" >&2; return 1; }
  json "['id']" < "$work/multipart.json" > "$work/asset.id"
}

cat > "$work/tus.py" <<'PY'
import base64, http.client, json, os, sys
host, port, token, path, tour, waypoint, chunk = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], int(sys.argv[7])
size = os.path.getsize(path)
b64 = lambda s: base64.b64encode(s.encode()).decode()
conn = http.client.HTTPConnection(host, port, timeout=600)
headers = {"Authorization": f"Bearer {token}", "Tus-Resumable": "1.0.0"}
conn.request("POST", "/api/v1/manage/uploads", headers={**headers, "Upload-Length": str(size),
             "Upload-Metadata": f"tour {b64(tour)},waypoint {b64(waypoint)},filename {b64('bench.png')}"})
response = conn.getresponse(); response.read()
assert response.status == 201, response.status
location = response.getheader("Location")
offset, asset = 0, None
with open(path, "rb") as f:
    while offset < size:
        data = f.read(chunk)
        conn.request("PATCH", location, body=data, headers={**headers, "Upload-Offset": str(offset),
                     "Content-Type": "application/offset+octet-stream"})
        response = conn.getresponse(); body = response.read()
        assert response.status == 204, (response.status, body)
        offset = int(response.getheader("Upload-Offset"))
        asset = response.getheader("Asset-Id") or asset
print(asset)
PY
# In chunks, as the browser uploader sends them (it starts at 8 MiB), from a small Python client on one connection.
tus_chunked_upload() {
  python3 "$work/tus.py" 127.0.0.1 "$port" "$token" "$file" "$tour" "$waypoint" $(( chunk_mib * 1024 * 1024 )) | tail -1 > "$work/asset.id"
}
# The whole file in one PATCH streamed by curl (tus-js-client's default); the upload is created outside the timing.
tus_create() {
  local b64; b64() { printf '%s' "$1" | base64 -w0; }
  curl -fsS -D - -o /dev/null -X POST -H "Authorization: Bearer $token" -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $bytes" \
    -H "Upload-Metadata: tour $(b64 "$tour"),waypoint $(b64 "$waypoint"),filename $(b64 bench.png)" "$base/api/v1/manage/uploads" |
    tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }' > "$work/tus.location"
}
tus_single_upload() {
  local location; location=$(cat "$work/tus.location")
  curl -fsS -D "$work/tus.headers" -o /dev/null -X PATCH -T "$file" -H "Authorization: Bearer $token" -H 'Tus-Resumable: 1.0.0' \
    -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' -H 'Expect:' "$base$location"
  tr -d '\r' < "$work/tus.headers" | awk 'tolower($1) == "asset-id:" { print $2 }' > "$work/asset.id"
}

runs="${BENCH_RUNS:-3}"
# Runs one way in $runs times: best time (with that run's server CPU), highest RSS growth; the first run's scan is
# timed. Sets r_secs r_cpu r_vm r_anon r_base r_scan r_status.
run_uploads() {  # upload function, optional preparation function (not timed)
  r_secs=""; r_vm=0; r_anon=0
  for run in $(seq 1 "$runs"); do
    [[ -z "${2:-}" ]] || "$2"
    measure "$1"
    local id; id=$(cat "$work/asset.id")
    [[ -n "$id" && "$(api "$base/api/v1/manage/assets/$id" | json "['sha256']")" == "$sha" ]] || { echo "$1: SHA-256 differs (asset '$id')"; exit 1; }
    if [[ "$(best "$r_secs" "$secs")" == "$secs" ]]; then r_secs=$secs; r_cpu=$cpu; fi
    (( rss_vm > r_vm )) && r_vm=$rss_vm; (( rss_anon > r_anon )) && r_anon=$rss_anon; r_base=$rss_base
    if (( run == 1 )); then read -r r_scan r_status <<< "$(wait_scanned "$id")"; else wait_scanned "$id" >/dev/null; fi
  done
}

# --- report --------------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
reference() { printf '%-27s %6ss  %5s MiB/s  %s x cp\n' "$1" "$2" "$(mibs "$2")" "$(ratio "$cp_secs" "$2")"; }
report_upload() {  # label (uses r_*)
  printf '%-27s %6ss  %5s MiB/s  %s x cp  %s x copy+hash  RSS +%d KiB (anon +%d KiB, base %d KiB)  scan %ss -> %s\n' \
    "$1" "$r_secs" "$(mibs "$r_secs")" "$(ratio "$cp_secs" "$r_secs")" "$(ratio "$tee_secs" "$r_secs")" "$r_vm" "$r_anon" "$r_base" "$r_scan" "$r_status"
  local half_cp half_hash rss
  half_cp=$(awk -v s="$r_secs" -v c="$cp_secs" 'BEGIN { print (s <= 2 * c) ? "yes" : "no" }')
  half_hash=$(awk -v s="$r_secs" -v c="$tee_secs" 'BEGIN { print (s <= 2 * c) ? "yes" : "no" }')
  rss=$(awk -v r="$r_vm" 'BEGIN { print (r < 65536) ? "yes" : "no" }')
  echo "                            server CPU ${r_cpu}s; >= 0.5 x cp: $half_cp; >= 0.5 x copy+hash: $half_hash; RSS growth < 64 MiB: $rss"
  bench_result "upload, $1, $size_mib MiB" "$(mibs "$r_secs") MiB/s" "copy+hash $(mibs "$tee_secs") MiB/s" "$(ratio "$tee_secs" "$r_secs")" ">= 0.5" "$half_hash"
  bench_result "upload RSS growth, $1" "$(( r_vm / 1024 )) MiB" "-" "-" "< 64 MiB" "$rss"
}

results=()
run_uploads multipart_upload;               results+=("$(report_upload 'multipart (curl -F)')")
run_uploads tus_chunked_upload;             results+=("$(report_upload "tus ($chunk_mib MiB PATCHes, Python)")")
run_uploads tus_single_upload tus_create;   results+=("$(report_upload 'tus (one PATCH, curl -T)')")

echo
echo "file: $bytes bytes ($size_mib MiB), random bytes with a PNG header, on $(df --output=source "$work" | tail -1)"
reference 'cp' "$cp_secs"
reference 'cp + sync' "$cp_sync_secs"
reference 'openssl dgst -sha256' "$sha_secs"
reference 'tee copy | openssl (c+h)' "$tee_secs"
echo "uploads: best of $runs runs each (RSS: the highest growth); copy+hash = the tee | openssl line"
for line in "${results[@]}"; do echo "$line"; done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server files: assets/ $(ls "$data/assets" | wc -l), uploads/ $(ls "$data/uploads" | wc -l), quarantine/ $(ls "$data/quarantine" | wc -l)"
