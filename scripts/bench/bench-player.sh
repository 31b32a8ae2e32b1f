#!/usr/bin/env bash
# The visitor web player on a phone's link, measured against the app's way in the same run:
#   1. time to "ready offline" for the demo tour (the demo's six stops along the Santiam Wagon Road, each with a
#      minute of narration and a photo, and map tiles of zoom 11 to 15 over its frame) in headless Chromium on a
#      phone-sized screen, through a link of 1.6 Mbit/s and 300 ms round trip (scripts/bench/load/throttle_proxy.py, which
#      the service worker's fetches go through too), from opening the link to the player saying the tour is saved;
#      against `curl` downloading the same version's signed package (what an app fetches) over the same link;
#   2. the second open of the saved tour: milliseconds from navigation to its first stop on screen (goal: under 1 s),
#      beside the first open's, and the same with the link down;
#   3. the bytes a one-file update (a new transcript) carries over the link, against the new version's full package.
#
#   scripts/bench/bench-player.sh
#   BENCH_LINK_KBIT=1600 BENCH_LINK_RTT_MS=300 scripts/bench/bench-player.sh
#
# Needs the browser suite's tools (Chromium, chromedriver, selenium and mercantile in .venv), ffmpeg and
# libvips-tools (scripts/install-deps.sh --test). Release build as the other benchmarks.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
work="$(mktemp -d /tmp/trail-bench-player.XXXXXX)"
kbit="${BENCH_LINK_KBIT:-1600}"
rtt="${BENCH_LINK_RTT_MS:-300}"
python="$root/.venv/bin/python"
[[ -x "$python" ]] || { echo "no .venv: run scripts/install-deps.sh --test" >&2; exit 2; }
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
proxy_pid=""
cleanup() {
  [[ -n "$proxy_pid" ]] && kill "$proxy_pid" 2>/dev/null || true
  bench_stop_server
  rm -rf "$work"
}
trap cleanup EXIT

bench_build
bench_start_server
media="$work/media"; mkdir -p "$media"

echo "making the demo tour's media ..."
# A minute of narration per stop as a recorder makes it (128 kbit/s MP3), and a phone photo (12 megapixels).
ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=220:duration=60" -f lavfi -i "anoisesrc=duration=60:amplitude=0.05" \
  -filter_complex amix=inputs=2 -ac 1 -c:a libmp3lame -b:a 128k "$media/narration.mp3"
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=4000x3000:duration=1,noise=alls=8:allf=t" -frames:v 1 -q:v 3 "$media/photo.jpg"
# Map tiles over the demo frame, zoom 11 to 15, each a 256 px PNG of the size a real map tile has (about 15 kB).
"$python" - "$media/demo.mbtiles" <<'PY'
import random, sqlite3, struct, sys, zlib
import mercantile
random.seed(7)
def png(seed):
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + bytes(rng.choice((40, 90, 160, 220)) for _ in range(256)) for _ in range(256))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
db = sqlite3.connect(sys.argv[1])
db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "Santiam Wagon Road"), ("format", "png"), ("minzoom", "11"), ("maxzoom", "15")])
for n, t in enumerate(mercantile.tiles(-122.28, 44.36, -121.97, 44.43, range(11, 16))):
    db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (t.z, t.x, (1 << t.z) - 1 - t.y, png(n)))
db.commit()
PY

tour=$(bench_tour "Santiam Wagon Road")
api "$author" -X PATCH "$base/api/v1/manage/tours/$tour" -d '{"minZoom": 11, "maxZoom": 15}' >/dev/null
first_audio=""
for stop in "House Rock:44.3927:-122.2449" "Iron Mountain:44.4023:-122.1558" "Tombstone Pass:44.3963:-122.1419" \
            "Hackleman Creek:44.3990:-122.0882" "Lost Prairie:44.4036:-122.0623" "Fish Lake:44.4012:-121.9948"; do
  IFS=: read -r name lat lon <<< "$stop"
  wp=$(bench_waypoint "$tour" "$name" "$lat" "$lon")
  audio=$(bench_upload "$tour" "$wp" "$media/narration.mp3" audio/mpeg "narration.mp3")
  bench_upload "$tour" "$wp" "$media/photo.jpg" image/jpeg "photo.jpg" >/dev/null
  [[ -z "$first_audio" ]] && first_audio="$audio"
done
curl -fsS -H "Authorization: Bearer $author" -H 'Expect:' -F "file=@$media/demo.mbtiles;filename=demo.mbtiles" \
  "$base/api/v1/manage/tours/$tour/tiles" >/dev/null
for _ in $(seq 1 600); do
  [[ "$(api "$author" "$base/api/v1/manage/tours/$tour/tiles" | json ".get('scanStatus')")" == clean ]] && break
  sleep 0.2
done
read -r package version sha < <(bench_release "$tour")
tiles=$(sqlite3 "$media/demo.mbtiles" 'SELECT COUNT(*) FROM tiles' 2>/dev/null || "$python" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM tiles').fetchone()[0])" "$media/demo.mbtiles")

# The link: every byte between Chromium (or curl) and the server goes through it.
coproc PROXY { exec "$python" "$root/scripts/bench/load/throttle_proxy.py" "${base##*:}" "$((kbit * 1000))" "$rtt" "$work/link-bytes"; }
proxy_pid=$PROXY_PID
read -r proxy_port <&"${PROXY[0]}"
link="http://127.0.0.1:$proxy_port"
zip_url="$link/api/v1/packages/$package/versions/$version/download"
echo "package $package version $version: $(curl -fsS -o /dev/null -w '%{size_download}' "$base/api/v1/packages/$package/versions/$version/download") bytes, $tiles tiles; link ${kbit} kbit/s, ${rtt} ms round trip"

echo "reference: curl downloads the signed package over the link ..."
curl_seconds=$(curl -fsS -o /dev/null -w '%{time_total}' "$zip_url")
zip_bytes=$(curl -fsS -o /dev/null -w '%{size_download}' "$base/api/v1/packages/$package/versions/$version/download")

echo "the player saves the tour over the link, then takes a one-file update ..."
sync="$work/sync"; mkdir -p "$sync"
"$python" "$root/scripts/bench/load/player_offline.py" "$link" "$package" "$work/link-bytes" "$sync" > "$work/player.json" &
player=$!
while [[ ! -e "$sync/saved" ]]; do
  kill -0 "$player" 2>/dev/null || { wait "$player"; echo "the player stopped before saving" >&2; exit 1; }
  sleep 0.2
done
api "$author" -X POST "$base/api/v1/manage/assets/$first_audio/transcript" -d '{"text": "The wagon road crossed the river below House Rock."}' >/dev/null
for _ in $(seq 1 600); do
  [[ "$(api "$author" "$base/api/v1/manage/assets/$first_audio" | json ".get('transcript', {}).get('scanStatus')")" == clean ]] && break
  sleep 0.2
done
read -r _ version2 _ < <(bench_release "$tour")
zip2_bytes=$(curl -fsS -o /dev/null -w '%{size_download}' "$base/api/v1/packages/$package/versions/$version2/download")
touch "$sync/released"
wait "$player"
cat "$work/player.json"

read -r ready save_bytes first_ms second_ms offline_ms update_seconds update_bytes < <("$python" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['ready_seconds'], r['save_bytes'], round(r['first_open_ms']), round(r['second_open_ms']), round(r['offline_open_ms']), r['update_seconds'], r['update_bytes'])" "$work/player.json")
ratio=$(awk -v a="$ready" -v b="$curl_seconds" 'BEGIN { printf "%.2f", a / b }')
share=$(awk -v a="$update_bytes" -v b="$zip2_bytes" 'BEGIN { printf "%.4f", a / b }')
printf 'ready offline: %.1f s (%s bytes over the link: page, player, files, tiles); curl of the package (%s bytes): %.1f s; ratio %sx (goal: at most 1.5x)\n' \
  "$ready" "$save_bytes" "$zip_bytes" "$curl_seconds" "$ratio"
printf 'one-file update: %s bytes over the link in %.1f s, against a package of %s bytes: %s of it (goal: under 0.05)\n' \
  "$update_bytes" "$update_seconds" "$zip2_bytes" "$share"
bench_result "player: ready offline, demo tour, ${kbit} kbit/s ${rtt} ms" "$(printf '%.1f' "$ready") s" "curl of the package $(printf '%.1f' "$curl_seconds") s" \
  "${ratio}x" "<= 1.5x" "$(awk -v r="$ratio" 'BEGIN { print (r <= 1.5) ? "yes" : "no" }')"
printf 'second open of the saved tour: first stop on screen after %s ms, %s ms with the link down (first open, unsaved: %s ms; goal: under 1000 ms)\n' \
  "$second_ms" "$offline_ms" "$first_ms"
bench_result "player: second open, first stop on screen" "$second_ms ms" "first open, unsaved: $first_ms ms" "—" "< 1000 ms" \
  "$(awk -v t="$second_ms" 'BEGIN { print (t < 1000) ? "yes" : "no" }')"
bench_result "player: second open with the link down, first stop on screen" "$offline_ms ms" "first open, unsaved: $first_ms ms" "—" "< 1000 ms" \
  "$(awk -v t="$offline_ms" 'BEGIN { print (t < 1000) ? "yes" : "no" }')"
bench_result "player: one-file update" "$update_bytes bytes" "package of $zip2_bytes bytes" "$share" "< 0.05" \
  "$(awk -v r="$share" 'BEGIN { print (r < 0.05) ? "yes" : "no" }')"
