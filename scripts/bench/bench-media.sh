#!/usr/bin/env bash
# Media for phones, measured against the reference tools in the same run:
#   1. the package of a tour with camera-sized media (a 1080p 40 Mbit/s video, 320 kbit/s audio, 12-megapixel photos),
#      optimized against the same tour with "keep original" on every file (goal: at least 5 times smaller);
#   2. one video's conversion by `trail-companion media optimize` against the very ffmpeg command line the server logged,
#      run by hand on the same file, in turns (goal: at most 1.1 times);
#   3. upload to ready (scanned and optimized) of a 1 GB camera video.
#
#   scripts/bench/bench-media.sh
#   BENCH_MEDIA_SECONDS=30 BENCH_MEDIA_BIG_MB=0 BENCH_RUNS=3 scripts/bench/bench-media.sh     smaller, no 1 GB row
#
# Needs ffmpeg, libvips-tools and exiftool (scripts/install-deps.sh --test). Release build as the other benchmarks.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
work="$(mktemp -d /tmp/trail-bench-media.XXXXXX)"; top="$work"
seconds="${BENCH_MEDIA_SECONDS:-60}"
big_mb="${BENCH_MEDIA_BIG_MB:-1024}"
runs="${BENCH_RUNS:-3}"
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
cleanup() { bench_stop_server; rm -rf "$top"; }
trap cleanup EXIT

# A camera's video: a moving test pattern with noise (so the bits are spent) at a constant 40 Mbit/s, 320 kbit/s sound.
camera_video() {  # FILE SECONDS
  ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$2,noise=alls=12:allf=t" \
    -f lavfi -i "sine=frequency=440:duration=$2:sample_rate=48000" -c:v libx264 -preset ultrafast -b:v 40M -minrate 40M \
    -maxrate 40M -bufsize 40M -x264-params nal-hrd=cbr -pix_fmt yuv420p -c:a aac -b:a 320k -ac 2 "$1"
}
size_of() { stat -c %s "$1"; }

bench_build
bench_start_server
media="$work/media"; mkdir -p "$media"
echo "making camera-sized media ($seconds s of 1080p video) ..."
camera_video "$media/falls.mp4" "$seconds"
ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=330:duration=$((seconds * 2))" -ac 2 -c:a libmp3lame -b:a 320k "$media/narration.mp3"
for n in 1 2 3; do
  ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=4000x3000:duration=1,noise=alls=20:allf=t" -frames:v 1 -q:v 2 "$media/photo$n.jpg"
  exiftool -q -overwrite_original -GPSLatitude=44.4 -GPSLatitudeRef=N -GPSLongitude=122.1 -GPSLongitudeRef=W "$media/photo$n.jpg"
done

# Waits until the asset's copy is no longer pending; prints its state.
wait_copy() {
  local state=pending
  for _ in $(seq 1 36000); do
    state=$(api "$author" "$base/api/v1/manage/assets/$1" | json ".get('optimized', {}).get('state', 'none')")
    [[ "$state" != pending && "$state" != none ]] && break
    sleep 0.2
  done
  echo "$state"
}

tour=$(bench_tour "Camera-sized walk")
wp=$(bench_waypoint "$tour" "Falls" 44.40 -122.0)
ids=()
for file in falls.mp4:video/mp4 narration.mp3:audio/mpeg photo1.jpg:image/jpeg photo2.jpg:image/jpeg photo3.jpg:image/jpeg; do
  name="${file%%:*}"; mime="${file#*:}"
  ids+=("$(bench_upload "$tour" "$wp" "$media/$name" "$mime" "$name")")
done
for id in "${ids[@]}"; do
  state=$(wait_copy "$id")
  [[ "$state" == ready ]] || { echo "asset $id: copy $state" >&2; exit 1; }
done
read -r package v1 _ < <(bench_release "$tour")
optimized_zip="$data/packages/$package/$v1.zip"
for id in "${ids[@]}"; do api "$author" -X PATCH "$base/api/v1/manage/assets/$id" -d '{"useOriginal": true}' >/dev/null; done
read -r _ v2 _ < <(bench_release "$tour")
original_zip="$data/packages/$package/$v2.zip"
a=$(size_of "$optimized_zip"); b=$(size_of "$original_zip")
ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b / a }')
echo "package: originals $b bytes, optimized $a bytes: ${ratio}x smaller (goal: at least 5x)"
bench_result "package with camera-sized media" "$a bytes optimized" "$b bytes originals" "${ratio}x smaller" ">= 5x" \
  "$(awk -v r="$ratio" 'BEGIN { print (r >= 5) ? "yes" : "no" }')"

# The server's own command line for the video, from its log, run by hand on the same original.
command_line=$(grep -o "asset ${ids[0]}: converting with .*" "$work/server.log" | head -1 | sed "s/^asset ${ids[0]}: converting with //")
[[ -n "$command_line" ]] || { echo "no conversion command in the server log" >&2; exit 1; }
read -r -a by_hand <<< "$command_line"
by_hand[-1]="$work/by-hand.mp4"   # the last argument is the output file
bench_stop_server
video_id="${ids[0]}"
echo "conversion of ${seconds} s of 1080p: media optimize against ffmpeg by hand, $runs pairs ..."
ratios=()
for run in $(seq 1 "$runs"); do
  sqlite3 "$data/trail.sqlite" "DELETE FROM optimizedCopy WHERE assetId = $video_id"
  t0=$(bench_now)
  "$bin" media optimize --site bench --root "$root" --data "$data" --clamav-db "$work/signatures" >/dev/null
  t1=$(bench_now)
  "${by_hand[@]}" >/dev/null
  t2=$(bench_now)
  server=$(bench_elapsed "$t0" "$t1"); hand=$(bench_elapsed "$t1" "$t2")
  ratios+=("$(awk -v s="$server" -v h="$hand" 'BEGIN { printf "%.3f", s / h }')")
  echo "  pair $run: media optimize ${server} s, ffmpeg by hand ${hand} s"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "conversion: ${median}x ffmpeg by hand (median of $runs pairs; goal: at most 1.1x)"
bench_result "video conversion (${seconds} s 1080p → 720p)" "media optimize" "the same ffmpeg command by hand" "${median}x" "<= 1.1x" \
  "$(awk -v r="$median" 'BEGIN { print (r <= 1.1) ? "yes" : "no" }')"

if (( big_mb > 0 )); then
  big_seconds=$(( big_mb * 8 / 41 ))
  echo "making a ${big_mb} MB camera video (${big_seconds} s) ..."
  camera_video "$media/big.mp4" "$big_seconds"
  work="$work/big"; mkdir -p "$work"   # a second server on a data folder of its own
  bench_start_server
  tour=$(bench_tour "Big video")
  wp=$(bench_waypoint "$tour" "Summit" 44.41 -122.1)
  t0=$(bench_now)
  id=$(bench_upload "$tour" "$wp" "$media/big.mp4" video/mp4 big.mp4)
  t1=$(bench_now)
  state=$(wait_copy "$id")
  t2=$(bench_now)
  echo "1 GB video: uploaded and scanned in $(bench_elapsed "$t0" "$t1") s, optimized ($state) $(bench_elapsed "$t1" "$t2") s later;" \
       "upload to ready $(bench_elapsed "$t0" "$t2") s for $(size_of "$media/big.mp4") bytes, ${big_seconds} s of video"
  bench_result "upload to ready, $(size_of "$media/big.mp4") bytes of 1080p video" "$(bench_elapsed "$t0" "$t2") s" "its play time ${big_seconds} s" \
    "$(awk -v a="$(bench_elapsed "$t0" "$t2")" -v b="$big_seconds" 'BEGIN { printf "%.2fx", a / b }')" "(recorded)" "-"
fi
