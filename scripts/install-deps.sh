#!/usr/bin/env bash
# Installs what Trail Companion needs from Debian (and, with --test, PyPI), skipping what is already there.
set -euo pipefail
# clamav-freshclam: the signature updater that scripts/fetch-signatures.sh runs on a first start.
# libqrencode-dev: the QR codes of the visitor player's links, for trailhead signs.
# libcurl4-openssl-dev: email (invitations, notifications) over SMTP with STARTTLS, through libcurl.
# ffmpeg (with ffprobe) and libvips-tools (vips, vipsheader): the phone-sized copies of videos, audio and images.
# libcairo2-dev and libpango1.0-dev: the print kit's PDFs (trailhead signs, booklets), drawn by Cairo with text laid
# out by Pango; fonts-dejavu-core: DejaVu Sans, the font they embed.
# libgdal-dev: the terrain model (--dem) the trail facts take their heights from (GeoTIFF, SRTM .hgt, any CRS).
# libosmium2-dev (headers) with libexpat1-dev and libbz2-dev: the drawn map reads OpenStreetMap extracts (--osm-extract,
# .osm.pbf or .osm) with libosmium.
# libjs-chart.js: the charts of the visitor statistics page, served under /vendor/chart.js like Leaflet and Bootstrap,
# so the page asks no other host for a script.
runtime=(libsqlite3-dev libz-dev libssl-dev libclamav-dev clamav-freshclam libqrencode-dev libcurl4-openssl-dev libgdal-dev libosmium2-dev libexpat1-dev libbz2-dev libcairo2-dev libpango1.0-dev fonts-dejavu-core ffmpeg libvips-tools libjs-leaflet libjs-bootstrap5 libjs-sortable libjs-chart.js pkg-config)
# nginx-light, openssl and systemd (systemd-analyze): Tests/e2e/test_behind_nginx.py and test_deploy_files.py check deploy/.
# aria2: the object-storage tests download a package from the bucket with an independent client.
# python3-venv: the Python test tools go into .venv (a Debian whose Python is "externally managed", PEP 668, refuses
# a system-wide pip install).
# gdal-bin (ogr2ogr, gdal_translate, gdallocationinfo, gdaltransform): the import tests read KML and CSV files that GDAL
# writes; the trail-facts tests make terrain models with GDAL's tools and check heights and exports against them. zbar-tools (zbarimg): the QR code
# tests read the codes back with a reader of their own. libimage-exiftool-perl (exiftool): writes the test photos' EXIF and
# checks that the phone-sized copies carry none. poppler-utils (pdfinfo, pdffonts, pdftotext, pdftoppm, pdftocairo): the
# print tests read the signs and booklets back, and scripts/bench/bench-print.sh re-renders them as its reference.
# osmium-tool: the drawn map's tests write their OpenStreetMap extracts with osmium itself.
testing=(osmium-tool libimage-exiftool-perl clamav clamav-daemon chromium chromium-driver zbar-tools poppler-utils unzip zip sqlite3 nginx-light wrk openssl systemd aria2 python3-venv gdal-bin oathtool)
wanted=("${runtime[@]}")
[[ "${1:-}" == "--test" ]] && wanted+=("${testing[@]}")
# nodejs: `node --test Tests/js/` runs the web player's unit tests; a node already on PATH (another install) will do.
[[ "${1:-}" == "--test" ]] && ! command -v node >/dev/null && wanted+=(nodejs)

missing=()
for package in "${wanted[@]}"; do
  installed="$package"
  # libz-dev is a virtual name (apt installs zlib1g-dev for it); dpkg only knows the real package.
  [[ "$package" == libz-dev ]] && installed=zlib1g-dev
  dpkg-query -W -f='${Status}' "$installed" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""; [[ "$(id -u)" == 0 ]] || sudo="sudo"
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--test" ]]; then
  # scripts/test.sh puts .venv/bin first on PATH, so every `python3` of the tests is this one.
  root="$(cd "$(dirname "$0")/.." && pwd)"
  [[ -x "$root/.venv/bin/python3" ]] || python3 -m venv "$root/.venv"
  "$root/.venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$root/Tests/requirements.txt"
fi
