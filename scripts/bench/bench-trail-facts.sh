#!/usr/bin/env bash
# Trail facts from a terrain model, measured against GDAL's own reader in the same run:
#   a 20 km track over a 1 arc-second SRTM tile (3601 × 3601 heights, hills made here with a known shape);
#   `trail-companion dem check` works the facts out (samples every 25 m and at each vertex, grades, profile) and prints
#   the milliseconds that took inside the process (goal: under 200 ms on the release build);
#   the reference is `gdallocationinfo -valonly -wgs84` reading the same number of points from the same tile, timed as a
#   whole command (its process start included, which the server's figure is not).
#
#   scripts/bench/bench-trail-facts.sh
#   BENCH_SKIP_BUILD=1 scripts/bench/bench-trail-facts.sh      the release build as it is
#
# Needs gdal-bin (scripts/install-deps.sh --test).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
work="$(mktemp -d /tmp/trail-bench-facts.XXXXXX)"
runs="${BENCH_RUNS:-5}"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
bench_build

# The tile: N44W123.hgt, big-endian 16-bit heights, rows from north to south, 1 arc-second apart; rolling hills of a
# few hundred metres over a slope, so that a walk climbs and falls.
python3 - "$work" <<'PY'
import math, sys
from array import array
n = 3601
out = open(f"{sys.argv[1]}/N44W123.hgt", "wb")
for row in range(n):
    lat = 45 - row / 3600
    line = array("h", (int(800 + 600 * (lat - 44) + 150 * math.sin((c / 3600) * 19) * math.cos((lat - 44) * 23)) for c in range(n)))
    line.byteswap()
    out.write(line.tobytes())
out.close()
# The track: a 20 km wander inside the tile, a point every 50 m or so.
points, lon, lat, heading = [], -122.8, 44.2, 0.3
walked = 0.0
while walked < 20000:
    points.append((lon, lat))
    heading += 0.15 * math.sin(len(points) / 17)
    dlat = 50 * math.cos(heading) / 111195
    dlon = 50 * math.sin(heading) / (111195 * math.cos(math.radians(lat)))
    lat, lon = lat + dlat, lon + dlon
    walked += 50
with open(f"{sys.argv[1]}/track.gpx", "w") as gpx:
    gpx.write('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="bench" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\n')
    gpx.writelines(f'<trkpt lat="{y:.7f}" lon="{x:.7f}"></trkpt>\n' for x, y in points)
    gpx.write("</trkseg></trk></gpx>\n")
# The reference's points: as many as the facts sample (every 25 m and each vertex).
with open(f"{sys.argv[1]}/points.txt", "w") as text:
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        text.write(f"{x0} {y0}\n{(x0 + x1) / 2} {(y0 + y1) / 2}\n")
    text.write(f"{points[-1][0]} {points[-1][1]}\n")
PY
echo "track: $(grep -c trkpt "$work/track.gpx") points; reference: $(wc -l < "$work/points.txt") points"

ours=(); theirs=()
for ((run = 1; run <= runs; run++)); do
  line=$("$bin" dem check --dem "$work/N44W123.hgt" --track "$work/track.gpx" | grep computeMilliseconds)
  ours+=("$(awk '{print $2}' <<<"$line")")
  start=$(bench_now)
  gdallocationinfo -valonly -wgs84 "$work/N44W123.hgt" <"$work/points.txt" >/dev/null
  theirs+=("$(awk -v s="$(bench_elapsed "$start" "$(bench_now)")" 'BEGIN { printf "%.2f", s * 1000 }')")
done
"$bin" dem check --dem "$work/N44W123.hgt" --track "$work/track.gpx" | sed -n 2p | cut -c1-300
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "trail facts of a 20 km track (in-process, ms): ${ours[*]}  median $(median "${ours[@]}")"
echo "gdallocationinfo, same number of points (whole command, ms): ${theirs[*]}  median $(median "${theirs[@]}")"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
