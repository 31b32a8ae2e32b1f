#!/usr/bin/env bash
# The map drawn from open data, measured on the release build against osmium itself in the same run:
#   the extract: a synthetic state-sized .osm.pbf (at least 200 MB; scripts/bench/synthetic-osm-extract.py, 1 km cells of
#     a settled rural district, versions and timestamps as a downloaded extract has them), made once and kept in
#     $scratch/bench-osm/;
#   indexing: `trail-companion map check` reads it once into the index (goal: at least 50 MB/s of .osm.pbf); reference:
#     `osmium fileinfo -e`, which decodes every block of the same file and keeps nothing;
#   drawing: the map of a 10 km × 10 km frame inside it, from the index, with contour lines from a 1 arc-second terrain
#     tile (goal: under 10 s, at most 4 MiB); reference: `osmium extract --bbox` of the same frame from the same
#     extract, which is what a build without the index would have to do before drawing anything;
#   the player: Chromium at 390 × 844 with DevTools' 4× CPU slowdown draws that GeoJSON with the player's own
#     visit-basemap.js (goal: under 500 ms from the bytes to a canvas that holds the drawing: two animation frames,
#     then one pixel read back, which makes the browser finish rasterizing), then pans the map for two seconds and
#     counts the frames that took longer than two frame intervals (33 ms), then times the redraw when the finger
#     lifts, at the opening zoom, two zooms in, and at 16 (the tour's highest); reference: the same page with an
#     empty map (Leaflet's own start, the same pans). The page has the player's viewport tag, so it is laid out as wide as the phone.
#
#   scripts/bench/bench-basemap.sh
#   BENCH_SKIP_BUILD=1 scripts/bench/bench-basemap.sh        the release build as it is
#   BENCH_OSM_CELLS=40 scripts/bench/bench-basemap.sh        a smaller extract (40 × 40 cells, about 26 MB) for a quick look
#
# Needs osmium-tool, gdal-bin, chromium and chromium-driver (scripts/install-deps.sh --test) and the .venv (selenium).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${BENCH_SCRATCH:-$root/.build}"
work="$(mktemp -d /tmp/trail-bench-basemap.XXXXXX)"
cells="${BENCH_OSM_CELLS:-112}"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench-lib.sh
source "$root/scripts/bench/bench-lib.sh"
bench_build

# The extract, kept between runs (making it takes a few minutes).
osm="$scratch/bench-osm"
extract="$osm/synthetic-v2-$cells.osm.pbf"
mkdir -p "$osm"
if [[ ! -s "$extract" ]]; then
  echo "writing a synthetic extract of $cells × $cells cells ..."
  python3 "$root/scripts/bench/synthetic-osm-extract.py" --west -122.6 --south 44.0 --columns "$cells" --rows "$cells" |
    osmium cat -F osm -o "$extract.partial.osm.pbf" -O
  mv "$extract.partial.osm.pbf" "$extract"
fi
megabytes=$(python3 -c "import os; print(round(os.path.getsize('$extract') / 1e6, 1))")
echo "extract: $extract ($megabytes MB)"

# A 1 arc-second SRTM tile over the extract's south-west, rolling hills on a slope, for the contour lines.
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
PY

# 10 km × 10 km at latitude 44.3.
frame="-122.50,44.30,-122.3745,44.39"

echo "indexing (trail-companion map check) ..."
index_line=$("$bin" map check --osm-extract "$extract" --index "$work/index" | tail -1)
echo "  $index_line"
start=$(bench_now); osmium fileinfo -e "$extract" >/dev/null; end=$(bench_now)
reference_index=$(bench_elapsed "$start" "$end")
echo "  reference: osmium fileinfo -e read the same file in $reference_index s"

echo "drawing the 10 km frame (from the index, contours from the terrain tile) ..."
draw_line=$("$bin" map check --osm-extract "$extract" --index "$work/index" --dem "$work/N44W123.hgt" --frame="$frame" --max-zoom 16 \
  --out "$work/frame.geojson" | tail -1)
echo "  $draw_line"
IFS=, read -r west south east north <<<"$frame"
start=$(bench_now)
osmium extract --bbox "$west,$south,$east,$north" -o "$work/frame.osm.pbf" -O "$extract" 2>/dev/null
end=$(bench_now)
reference_draw=$(bench_elapsed "$start" "$end")
echo "  reference: osmium extract --bbox of the same frame took $reference_draw s"

echo "the player: Chromium, 390 × 844, 4× CPU slowdown ..."
PATH="$root/.venv/bin:$PATH" python3 - "$root" "$work/frame.geojson" "$frame" <<'PY'
import http.server, os, shutil, socketserver, sys, tempfile, threading, time
from selenium import webdriver

root, geojson, frame = sys.argv[1], sys.argv[2], [float(v) for v in sys.argv[3].split(",")]
empty = os.path.join(tempfile.mkdtemp(), "empty.geojson")
with open(empty, "w") as out:
    out.write('{"type": "FeatureCollection", "features": []}')


def measure(label, geojson):
    site = tempfile.mkdtemp()
    shutil.copy(os.path.join(root, "Public/js/visit-basemap.js"), site)
    shutil.copy(geojson, os.path.join(site, "frame.geojson"))
    for name in ("leaflet.js", "leaflet.css"):
        shutil.copy(os.path.join("/usr/share/javascript/leaflet", name), site)
    with open(os.path.join(site, "index.html"), "w") as page:
        # The player's viewport tag: without it, a phone (and Chromium's mobile emulation) lays the page out 980 px wide
        # and the canvas holds six times the pixels the player's does.
        page.write(f"""<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="stylesheet" href="leaflet.css">
    <style>html,body,#map{{margin:0;height:100%}}</style></head><body><div id="map"></div>
    <script src="leaflet.js"></script>
    <script type="module">
    import {{ addBasemap }} from './visit-basemap.js';
    const map = L.map('map').fitBounds([[{frame[1]}, {frame[0]}], [{frame[3]}, {frame[2]}]]);
    const bytes = await (await fetch('frame.geojson')).arrayBuffer();
    const started = performance.now();
    const geojson = JSON.parse(new TextDecoder().decode(bytes));
    window.parseMs = performance.now() - started;
    addBasemap(L, map, geojson, geojson.attribution);
    window.addMs = performance.now() - started - window.parseMs;
    // Until the canvas holds the drawing: two frames (Leaflet draws in an animation frame), then one pixel read back,
    // which makes the browser finish rasterizing what was drawn.
    const settled = async () => {{
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      const canvas = document.querySelector('.leaflet-basemap-pane canvas');
      if (canvas) canvas.getContext('2d').getImageData(0, 0, 1, 1);
      window.drawnAt ||= `zoom ${{map.getZoom()}}, canvas ${{canvas?.width}} × ${{canvas?.height}} px`;
    }};
    await settled();
    window.drawMs = performance.now() - started;
    // Two seconds of panning as a finger drags the map (Leaflet's drag handler moves the map pane and fires `move`; the
    // canvas is redrawn once, at `moveend`): every frame's interval, then the redraw when the finger lifts. At the
    // opening zoom, two zooms in (where the classes the overview leaves out are drawn too), and the tour's highest.
    const pan = async () => {{
      const intervals = [];
      let last = performance.now();
      const until = last + 2000;
      let step = 0;
      await new Promise((done) => {{
        function frame(now) {{
          intervals.push(now - last); last = now;
          map._rawPanBy([step++ % 120 < 60 ? 6 : -6, Math.round(3 * Math.sin(step / 10))]);
          map.fire('move');
          if (now < until) requestAnimationFrame(frame); else done();
        }}
        requestAnimationFrame(frame);
      }});
      const lifted = performance.now();
      map.fire('moveend');
      await settled();
      const slow = intervals.filter((ms) => ms > 33.4).length;
      return `zoom ${{map.getZoom()}}: ${{intervals.length}} frames in 2 s, ${{slow}} over 33 ms, the slowest ${{Math.round(Math.max(...intervals))}} ms, `
        + `redrawn when the finger lifts in ${{Math.round(performance.now() - lifted)}} ms`;
    }};
    const panned = [await pan()];
    for (const zoom of [map.getZoom() + 2, 16]) {{
      map.setZoom(zoom, {{ animate: false }});
      await settled();
      panned.push(await pan());
    }}
    window.panned = panned.join('; ');
    window.done = true;
    </script></body></html>""")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs): super().__init__(*args, directory=site, **kwargs)
        def log_message(self, *args): pass
    server = socketserver.TCPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=390,844"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        for _ in range(600):
            if driver.execute_script("return window.done === true"): break
            time.sleep(0.1)
        result = driver.execute_script("return {drawMs: window.drawMs, panned: window.panned, drawnAt: window.drawnAt, "
                                       "parseMs: window.parseMs, addMs: window.addMs}")
        print(f"  {label} ({result['drawnAt']}): drawn in {result['drawMs']:.0f} ms (JSON {result['parseMs']:.0f} ms, "
              f"layers and first drawing {result['addMs']:.0f} ms); panning at {result['panned']}")
    finally:
        driver.quit()
        server.shutdown()
        shutil.rmtree(site)


measure("the frame", geojson)
measure("reference, an empty map", empty)
PY
