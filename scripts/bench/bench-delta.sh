#!/usr/bin/env bash
# Delta update benchmark: what an app on version 1 of a large tour downloads, and how long it takes, when a ranger
# replaces one 5 MiB audio file and releases version 2, next to a full download of version 2 in the same run.
#
#   scripts/bench/bench-delta.sh [SIZE_MIB]        default 512 (the video; the package is a little larger)
#
# What it does:
#   1. builds the server in release mode and starts it on a temp data folder (scripts/bench/bench-lib.sh);
#   2. through the management API: a tour with two waypoints, a SIZE_MIB video on the first and a 5 MiB MP3 on the
#      second; released as version 1 and installed on the "phone" with `trail-companion package install`;
#   3. the MP3 replaced (its waypoint deleted and made again with a new 5 MiB MP3), released as version 2;
#   4. each of BENCH_RUNS runs (default 3), on a fresh copy of the version-1 folder:
#        - `trail-companion package update` (TrailClient.update: signed catalog and manifest, hard links for the
#          unchanged files, the changed ones fetched by hash), timed; the server's own count of the bytes it sent
#          (`trail_download_bytes_total` from /metrics, read before and after) is the bytes transferred;
#        - a full download of version 2, `curl -o` of /api/v1/packages/<id>/download, timed (the reference);
#        - `trail-companion package install` of version 2 (download, verify, extract), timed;
#      and the updated folder checked: every file matches version 2's signed manifest, nothing else is there.
# Goal: bytes sent for the update <= 1.05 x (the changed file + the manifest). Verdicts are printed; the
# exit status is 0 unless something failed outright.
#
# Environment: BENCH_SCRATCH (SwiftPM build folder, default .build), BENCH_WORK (work folder, default a new one under
# ${TMPDIR:-/tmp}, removed at the end unless KEEP=1), BENCH_RUNS (default 3), BENCH_SKIP_BUILD=1.
set -euo pipefail

size_mib="${1:-512}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
runs="${BENCH_RUNS:-3}"
for tool in curl python3 swift sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }; done
if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-delta.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
cleanup() {
  bench_stop_server
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

bench_build
bench_start_server

mp3() {  # an ID3 tag, then random bytes: 5 MiB of "audio" that no two calls share
  { printf 'ID3\x04\x00\x00\x00\x00\x00\x00'; head -c $(( 5 * 1024 * 1024 - 10 )) /dev/urandom; } > "$1"
}
sent() {  # the server's count of body bytes sent by one download route
  api "$admin" "$base/metrics" | awk -v r="trail_download_bytes_total{route=\"$1\"}" '$1 == r { print $2; found = 1 } END { if (!found) print 0 }'
}

# --- version 1 and the phone --------------------------------------------------------------------------------------
tour=$(bench_tour "Delta Tour")
lake=$(bench_waypoint "$tour" "Fish Lake" 44.40 -122.0)
falls=$(bench_waypoint "$tour" "Sahalie Falls" 44.38 -121.99)
echo "writing a ${size_mib} MiB video ..."
{ printf '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2\x00\x00\x00\x08free'; head -c $(( size_mib * 1024 * 1024 - 32 )) /dev/urandom; } > "$work/walk.mp4"
mp3 "$work/falls.mp3"
echo "uploading, scanning, building and releasing version 1 ..."
bench_upload "$tour" "$lake" "$work/walk.mp4" video/mp4 walk.mp4 >/dev/null
bench_upload "$tour" "$falls" "$work/falls.mp3" audio/mpeg falls.mp3 >/dev/null
rm -f "$work/walk.mp4" "$work/falls.mp3"
read -r package v1 _ < <(bench_release "$tour")
mkdir -p "$work/phone"
"$bin" package install "$package" "$work/phone/v1" --server "$base"

# --- version 2: the audio replaced --------------------------------------------------------------------------------
api "$author" -X DELETE "$base/api/v1/manage/tours/$tour/waypoints/$falls" >/dev/null
falls=$(bench_waypoint "$tour" "Sahalie Falls" 44.38 -121.99)
mp3 "$work/falls2.mp3"
changed=$(stat -c %s "$work/falls2.mp3")
echo "releasing version 2 (a new 5 MiB MP3) ..."
bench_upload "$tour" "$falls" "$work/falls2.mp3" audio/mpeg falls.mp3 >/dev/null
rm -f "$work/falls2.mp3"
read -r _ v2 sha2 < <(bench_release "$tour")
full_bytes=$(stat -c %s "$data/packages/$package/$v2.zip")
manifest_bytes=$(curl -fsS "$base/api/v1/packages/$package/versions/$v2/manifest" | wc -c)
echo "package $package: v$v1 -> v$v2, full download $full_bytes bytes, changed file $changed bytes, manifest $manifest_bytes bytes"
cat "$data/packages/$package/$v2.zip" > /dev/null  # in the page cache, as the files are

# Every file of the folder is listed in its manifest.json with that size and SHA-256, and nothing else is there.
check_folder() {
  python3 - "$1" <<'PY'
import hashlib, json, os, sys
folder = sys.argv[1]
manifest = json.load(open(os.path.join(folder, "manifest.json")))
listed = {}
def walk(value):
    if isinstance(value, dict):
        if "path" in value and "sha256" in value: listed[value["path"]] = (value["sha256"], value.get("size"))
        for item in value.values(): walk(item)
    elif isinstance(value, list):
        for item in value: walk(item)
walk(manifest)
present = set()
for dirpath, _, names in os.walk(folder):
    for name in names: present.add(os.path.relpath(os.path.join(dirpath, name), folder))
extra = present - set(listed) - {"manifest.json", "manifest.sig"}
assert not extra, f"files not in the manifest: {extra}"
for path, (sha, size) in listed.items():
    h = hashlib.sha256()
    with open(os.path.join(folder, path), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""): h.update(chunk)
    assert h.hexdigest() == sha, f"{path}: SHA-256 differs"
    assert size is None or os.path.getsize(os.path.join(folder, path)) == size, f"{path}: size differs"
print(f"version {manifest['version']}: {len(listed)} files match the manifest")
PY
}

timed() { local start; start=$(bench_now); "$@" > "$work/last.out"; secs=$(bench_elapsed "$start" "$(bench_now)"); }
update_secs=(); curl_secs=(); install_secs=(); update_sent=()
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (cores: $(nproc))"
for run in $(seq 1 "$runs"); do
  rm -rf "$work/phone/run" "$work/phone/full" "$work/phone/full.zip"
  cp -a "$work/phone/v1" "$work/phone/run"
  sync
  files0=$(sent file); manifests0=$(sent manifest); packages0=$(sent package)
  timed "$bin" package update "$package" "$work/phone/run" --server "$base"
  update_secs+=("$secs")
  files1=$(sent file); manifests1=$(sent manifest); packages1=$(sent package)
  update_sent+=("$(( files1 - files0 + manifests1 - manifests0 + packages1 - packages0 ))")
  echo "  run $run: $(cat "$work/last.out")"
  check_folder "$work/phone/run" | sed 's/^/    /'
  timed curl -fsS -o "$work/phone/full.zip" "$base/api/v1/packages/$package/download"
  curl_secs+=("$secs")
  [[ "$(sha256sum "$work/phone/full.zip" | cut -d' ' -f1)" == "$sha2" ]] || { echo "the full download is not version $v2"; exit 1; }
  rm -f "$work/phone/full.zip"
  timed "$bin" package install "$package" "$work/phone/full" --server "$base"
  install_secs+=("$secs")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
max() { printf '%s\n' "$@" | sort -n | tail -1; }
worst_sent=$(max "${update_sent[@]}")
limit=$(awk -v c="$changed" -v m="$manifest_bytes" 'BEGIN { printf "%.0f", 1.05 * (c + m) }')
u=$(median "${update_secs[@]}"); c=$(median "${curl_secs[@]}"); i=$(median "${install_secs[@]}")
cat <<EOF

Delta update benchmark: ${size_mib} MiB video + 5 MiB audio, the audio replaced; loopback, $(nproc) cores, median of $runs runs
| measurement | bytes sent by the server | wall time | vs full download (curl) |
|---|---|---|---|
| package update v$v1 -> v$v2 (TrailClient.update) | $worst_sent (most of $runs runs) | $u s | $(awk -v a="$u" -v b="$c" 'BEGIN { printf "%.2f x", a / b }') |
| full download of v$v2, curl -o | $full_bytes | $c s | 1.00 x |
| package install v$v2 (download, verify, extract) | $full_bytes | $i s | $(awk -v a="$i" -v b="$c" 'BEGIN { printf "%.2f x", a / b }') |
Update bytes: $worst_sent = $(awk -v a="$worst_sent" -v c="$changed" -v m="$manifest_bytes" 'BEGIN { printf "%.3f", a / (c + m) }') x (changed file $changed + manifest $manifest_bytes); $(awk -v a="$worst_sent" -v f="$full_bytes" 'BEGIN { printf "%.2f%%", 100 * a / f }') of a full download.
Goal: at most 1.05 x ($limit bytes): $( (( worst_sent <= limit )) && echo "goal met" || echo "goal missed")
EOF
bench_result "delta update, bytes sent" "$worst_sent B" "changed file + manifest $(( changed + manifest_bytes )) B" \
  "$(awk -v a="$worst_sent" -v c="$changed" -v m="$manifest_bytes" 'BEGIN { printf "%.3f", a / (c + m) }')" "<= 1.05" \
  "$( (( worst_sent <= limit )) && echo yes || echo no)"
