#!/usr/bin/env bash
# The print kit against a reference in the same run:
#   a published 20-stop tour (with a closure in force) on a server whose public address
#   is a public one; each file fetched BENCH_RUNS times through the API, timed by curl from request to last byte
#   (goals on the release build: the 24 × 36 in sign under 2 s, the letter booklet under 3 s);
#   the reference is poppler's `pdftocairo -pdf` re-drawing the same file through Cairo (reading the PDF, drawing
#   every page again, writing a PDF), timed as a whole command: the same drawing library on the same content.
#
#   scripts/bench/bench-print.sh
#   BENCH_SKIP_BUILD=1 scripts/bench/bench-print.sh            the release build as it is
#   BENCH_BIN=.build/debug/trail-companion scripts/bench/bench-print.sh     another binary (say so when quoting the figures)
#   BENCH_PRINT_OUT=folder scripts/bench/bench-print.sh         keeps the measured files there, to look at
#
# Needs poppler-utils (scripts/install-deps.sh --test).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
work="$(mktemp -d /tmp/trail-bench-print.XXXXXX)"
runs="${BENCH_RUNS:-5}"
cleanup() { bench_stop_server; rm -rf "$work"; }
trap cleanup EXIT
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
bench_build
BENCH_SERVE_FLAGS="${BENCH_SERVE_FLAGS:-} --public-url https://tours.example.org"
bench_start_server

tour=$(bench_tour "Twenty Stop Ridge Walk")
for i in $(seq 1 20); do
  lat=$(awk -v i="$i" 'BEGIN { printf "%.5f", 44.37 + 0.0028 * i }')
  lon=$(awk -v i="$i" 'BEGIN { printf "%.5f", -122.25 + 0.012 * i + 0.01 * sin(i) }')
  bench_waypoint "$tour" "Stop number $i" "$lat" "$lon" >/dev/null
done
released=$(bench_release "$tour")
echo "released: $released"
api "$author" -X POST "$base/api/v1/manage/sites/bench/alerts" \
  -d "{\"title\": \"Upper bridge closed\", \"message\": \"Use the ford.\", \"severity\": \"closure\", \"tourId\": $tour, \"endsAt\": \"$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ)\"}" >/dev/null

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() {
  local name="$1" path="$2" ours=() theirs=()
  for ((run = 1; run <= runs; run++)); do
    ours+=("$(curl -sS --fail-with-body -H "Authorization: Bearer $author" -o "$work/$name.pdf" -w '%{time_total}' "$base/api/v1/manage/tours/$tour/print/$path")")
    local start; start=$(bench_now)
    pdftocairo -pdf "$work/$name.pdf" "$work/$name-again.pdf"
    theirs+=("$(bench_elapsed "$start" "$(bench_now)")")
  done
  echo "$name: $(pdfinfo "$work/$name.pdf" | grep -E '^(Pages|Page size)' | tr -s ' ' | paste -sd ';'), $(stat -c %s "$work/$name.pdf") bytes"
  echo "  the server (request to last byte, s): ${ours[*]}  median $(median "${ours[@]}")"
  echo "  pdftocairo -pdf of the same file (whole command, s): ${theirs[*]}  median $(median "${theirs[@]}")"
  bench_result "print $name, 20 stops" "$(median "${ours[@]}") s" "pdftocairo: $(median "${theirs[@]}") s" "" "$3" ""
}
measure sign-24x36in "sign.pdf?size=24x36in" "< 2 s"
measure booklet-letter "booklet.pdf?paper=letter" "< 3 s"
# Every code read back from 150 dpi rasters with ZBar: the booklet's pages whole, the sign's page whole and in eight
# overlapping bands (ZBar, handed dozens of codes in one image, may miss one that it reads in a band).
decoded() {
  local file="$1" bands="$2" pages width height step y
  pages=$(pdfinfo "$file" | awk '/^Pages:/ { print $2 }')
  for ((page = 1; page <= pages; page++)); do
    pdftoppm -r 150 -gray -png -singlefile -f "$page" -l "$page" "$file" "$work/raster"
    zbarimg --quiet --raw -Sdisable -Sqrcode.enable "$work/raster.png" 2>/dev/null || true
    if ((bands > 1)); then
      width=$(pdfinfo -f "$page" -l "$page" "$file" | awk '/^Page +[0-9]+ size:/ { printf "%d", $4 * 150 / 72 + 1 }')
      height=$(pdfinfo -f "$page" -l "$page" "$file" | awk '/^Page +[0-9]+ size:/ { printf "%d", $6 * 150 / 72 + 1 }')
      step=$((height / bands))
      for ((y = 0; y < height - step; y += step)); do
        pdftoppm -r 150 -gray -png -singlefile -f "$page" -l "$page" -x 0 -y "$y" -W "$width" -H $((2 * step)) "$file" "$work/band"
        zbarimg --quiet --raw -Sdisable -Sqrcode.enable "$work/band.png" 2>/dev/null || true
      done
    fi
  done | sort -u | grep -c .
}
echo "QR codes read back at 150 dpi (the tour's and 20 stops' are 21): sign $(decoded "$work/sign-24x36in.pdf" 8), booklet $(decoded "$work/booklet-letter.pdf" 1)"
[[ -n "${BENCH_PRINT_OUT:-}" ]] && mkdir -p "$BENCH_PRINT_OUT" && cp "$work/sign-24x36in.pdf" "$work/booklet-letter.pdf" "$BENCH_PRINT_OUT/"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
