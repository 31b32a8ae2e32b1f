#!/usr/bin/env bash
# Object-storage benchmark: `trail-companion storage sync` of a large released package to a real SeaweedFS, next to
# `aws s3 cp` (the AWS CLI) of the same files to the same bucket, in the same run.
#
#   scripts/bench/bench-storage.sh [SIZE_MIB]        default 1024 (the video; the package is a little larger)
#
# What it does:
#   1. builds the server in release mode, starts it on a temp data folder and releases a tour with one SIZE_MIB video
#      through the management API (scripts/bench/bench-lib.sh), then stops it;
#   2. starts SeaweedFS (`weed server -s3`, Tests/TestSupport/Scripts/object_store.py) on free loopback ports;
#   3. each of BENCH_RUNS runs (default 3), each to a new prefix so everything is sent:
#        - `trail-companion storage sync` (every object of the tree: the zip and the video by hash are the big ones,
#          each a multipart upload streamed from disk), timed, with its peak RSS (getrusage of the child);
#        - `aws s3 cp` of the same two big files (the zip, then the video) to the same bucket, timed (the reference);
#   4. checks the synced zip in the bucket has the release's SHA-256 (downloaded once at the end).
# Goal: sync time <= 1.25 x aws s3 cp (throughput >= 0.8 x); peak RSS of the syncing process < 64 MiB
# above its idle size. Verdicts are printed; the exit status is 0 unless something failed outright.
#
# Environment: BENCH_SCRATCH (SwiftPM build folder, default .build), BENCH_WORK (work folder, default a new one under
# ${TMPDIR:-/tmp}, removed at the end unless KEEP=1), BENCH_RUNS (default 3), BENCH_SKIP_BUILD=1.
set -euo pipefail

size_mib="${1:-1024}"
[[ "$size_mib" =~ ^[0-9]+$ ]] && (( size_mib >= 1 )) || { echo "usage: $0 [SIZE_MIB]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
runs="${BENCH_RUNS:-3}"
for tool in curl python3 swift aws weed sha256sum; do command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/install-deps.sh --test)" >&2; exit 2; }; done
if [[ -n "${BENCH_WORK:-}" ]]; then work="$BENCH_WORK"; mkdir -p "$work"; else work="$(mktemp -d "${TMPDIR:-/tmp}/bench-storage.XXXXXX")"; fi
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
store_pid=""
cleanup() {
  bench_stop_server
  [[ -n "$store_pid" ]] && kill "$store_pid" 2>/dev/null && wait "$store_pid" 2>/dev/null || true
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

bench_build
bench_start_server
tour=$(bench_tour "Storage Tour")
lake=$(bench_waypoint "$tour" "Fish Lake" 44.40 -122.0)
echo "writing a ${size_mib} MiB video ..."
{ printf '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2\x00\x00\x00\x08free'; head -c $(( size_mib * 1024 * 1024 - 32 )) /dev/urandom; } > "$work/walk.mp4"
video_sha=$(sha256sum "$work/walk.mp4" | cut -d' ' -f1)
echo "uploading, scanning, building and releasing ..."
bench_upload "$tour" "$lake" "$work/walk.mp4" video/mp4 walk.mp4 >/dev/null
rm -f "$work/walk.mp4"
read -r package version sha < <(bench_release "$tour")
bench_stop_server
zip="$data/packages/$package/$version.zip"
video="$data/assets/$video_sha"
[[ -f "$video" ]] || { echo "no asset file $video" >&2; exit 1; }
zip_bytes=$(stat -c %s "$zip"); video_bytes=$(stat -c %s "$video")
cat "$zip" "$video" > /dev/null  # both in the page cache, for both tools alike

echo "starting SeaweedFS ..."
# Room for every run's copies: 256 MiB volumes, enough for (BENCH_RUNS x 2 + 1) x the two files.
OBJECT_STORE_VOLUMES=$(( (runs * 2 + 1) * (zip_bytes + video_bytes) / (256 * 1048576) + 20 )) \
  python3 "$root/Tests/TestSupport/Scripts/object_store.py" seaweedfs "$work/weed" bench > "$work/store.json" 2> "$work/store.err" &
store_pid=$!
for _ in $(seq 1 600); do [[ -s "$work/store.json" ]] && break; sleep 0.1; done
[[ -s "$work/store.json" ]] || { echo "SeaweedFS did not start:"; cat "$work/store.err"; exit 1; }
endpoint=$(json "['endpoint']" < "$work/store.json")
export AWS_ACCESS_KEY_ID=$(json "['accessKey']" < "$work/store.json") AWS_SECRET_ACCESS_KEY=$(json "['secretKey']" < "$work/store.json")
export AWS_DEFAULT_REGION=us-east-1

# Runs a command and prints "<seconds> <peak RSS KiB>" (getrusage of the child, so only its own memory).
timed() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.monotonic() - start
if status.returncode != 0:
    sys.stderr.write(status.stderr.decode())
    sys.exit(status.returncode)
print(f"{elapsed:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}

# The idle size of the same binary: `storage sync` on an empty data folder does everything but the uploads.
mkdir -p "$work/empty"
"$bin" migrate --root "$root" --data "$work/empty" >/dev/null
read -r _ idle_rss < <(timed "$bin" storage sync --root "$root" --data "$work/empty" --storage "s3://bench/idle" --s3-endpoint "$endpoint")

sync_times=(); aws_times=(); rss=()
for run in $(seq 1 "$runs"); do
  read -r t m < <(timed "$bin" storage sync --root "$root" --data "$data" --storage "s3://bench/run$run" --s3-endpoint "$endpoint")
  sync_times+=("$t"); rss+=("$m")
  read -r a _ < <(timed bash -c "aws --endpoint-url '$endpoint' s3 cp --only-show-errors '$zip' s3://bench/aws$run/$version.zip && aws --endpoint-url '$endpoint' s3 cp --only-show-errors '$video' s3://bench/aws$run/$video_sha")
  aws_times+=("$a")
  echo "run $run: storage sync $t s (peak RSS $m KiB), aws s3 cp $a s"
done
aws --endpoint-url "$endpoint" s3 cp --only-show-errors "s3://bench/run1/packages/$package/$version.zip" "$work/back.zip"
[[ "$(sha256sum "$work/back.zip" | cut -d' ' -f1)" == "$sha" ]] || { echo "the synced zip does not have the release's SHA-256" >&2; exit 1; }

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
s=$(median "${sync_times[@]}"); a=$(median "${aws_times[@]}"); peak=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
mib=$(awk -v b="$(( zip_bytes + video_bytes ))" 'BEGIN { printf "%.0f", b / 1048576 }')
growth=$(( (peak - idle_rss) / 1024 ))
cat <<REPORT

| $(nproc) cores, SeaweedFS $(weed version 2>/dev/null | awk '{print $3}') on loopback, $runs runs, medians | bytes | seconds | MiB/s |
|---|---|---|---|
| trail-companion storage sync (zip + video by hash, multipart) | $(( zip_bytes + video_bytes )) | $s | $(awk -v m="$mib" -v t="$s" 'BEGIN { printf "%.0f", m / t }') |
| aws s3 cp of the same two files (reference) | $(( zip_bytes + video_bytes )) | $a | $(awk -v m="$mib" -v t="$a" 'BEGIN { printf "%.0f", m / t }') |

Throughput: $(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.2f", a / s }') x aws s3 cp (goal >= 0.8): $(awk -v s="$s" -v a="$a" 'BEGIN { print (a / s >= 0.8 ? "met" : "NOT met") }').
Peak RSS of storage sync: $(( peak / 1024 )) MiB, $growth MiB above its idle $(( idle_rss / 1024 )) MiB (goal < 64): $( (( growth < 64 )) && echo met || echo "NOT met").
REPORT
bench_result "storage sync, $mib MiB" "$s s" "aws s3 cp $a s" "$(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.2f x speed", a / s }')" ">= 0.8 x" \
  "$(awk -v s="$s" -v a="$a" 'BEGIN { print (a / s >= 0.8 ? "yes" : "no") }')"
bench_result "storage sync RSS growth" "$growth MiB" "-" "-" "< 64 MiB" "$( (( growth < 64 )) && echo yes || echo no)"
