#!/usr/bin/env bash
# A district's worth of tours: the lists that grow with it, timed at 1 tour and at 1,000 tours of 30 waypoints each
# (100 of them published), against a release build. Each route gets 30 keep-alive requests after 3 warm-up ones;
# printed: p50 and p95 per route and size, and the ratio of the p50 at 1,000 to the p50 at 1.
#
#   - GET /api/v1/manage/tours?site=…           the first page (50 summaries), a page deep in the list (by cursor),
#                                                a name search and a state filter
#   - GET /sites/{slug}                          the panel's site page (25 rows), and with a search
#   - GET /visit                                 the visitors' list (first page), and its 304 to If-None-Match
#   - GET /tours/{id}                            the panel's page of one tour with 30 waypoints
#
# Goals at 1,000 tours: p95 < 20 ms for every list, and p50 within 2× of the same list at 1 tour. The reference is
# nginx serving a static copy of the same bytes (the 1,000-tour answers saved to files), as the other benchmarks compare.
#
# The ratio is read pair by pair, as `farm-bench` does: at 1,000 tours a second site ('single') holds one tour of 30
# waypoints, and each turn asks a site-scoped list (the API's four, the site page's two) of that site and of the
# 1,000-tour site back to back, in alternating order; the goal's ratio is the median of the turns' ratios. A phase
# before the seeding and one after it, minutes apart, also differ by whatever else the machine did in between, which
# moved that ratio by up to a third between runs of the same build. That phase ratio is printed beside it.
#
# The tours and waypoints are written straight into the database (Python's sqlite3, the server running: one
# transaction), not through 30,000 HTTP calls; one tour is released through the real flow and its package row copied
# 99 times under other ids and names (the same signed manifest), which is all /visit reads.
#
#   scripts/bench/bench-district.sh       (BENCH_SKIP_BUILD=1 reuses the release build; BENCH_REQUESTS: timed requests, 30)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/trail-district.XXXXXX)"
scratch="${BENCH_SCRATCH:-$root/.build}"
requests="${BENCH_REQUESTS:-30}"
source "$root/scripts/bench/bench-lib.sh"
cleanup() { bench_stop_nginx; bench_stop_server; rm -rf "$work"; }
trap cleanup EXIT

bench_build
bench_start_server
cli() { "$bin" "$@" --root "$root" --data "$data"; }

echo "setting up: one released tour (site 'released'), one tour of 30 waypoints (site 'bench') ..."
cli site create --slug released --name "Released Park" >/dev/null
cli member add --site released --email author@trail.test --role manager >/dev/null
cli member add --site released --email reviewer@trail.test --role reviewer >/dev/null
cli site create --slug single --name "Single Tour Park" >/dev/null
cli member add --site single --email author@trail.test --role manager >/dev/null
python3 - "$work/view.png" <<'PY'
import struct, sys, zlib
w, h = 64, 32
raw = b"".join(b"\x00" + bytes((x * 7 + y * 3) % 256 for x in range(w * 3)) for y in range(h))
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
released_tour=$(api "$author" -X POST "$base/api/v1/manage/tours" -d '{"site": "released", "name": "Released Walk", "description": "A walk."}' | json "['id']")
api "$author" -X PATCH "$base/api/v1/manage/tours/$released_tour" -d '{"frame": {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}}' >/dev/null
w=$(bench_waypoint "$released_tour" "Trailhead" 44.40 -122.0)
bench_upload "$released_tour" "$w" "$work/view.png" image/png "view.png" >/dev/null
read -r package _version _sha < <(bench_release "$released_tour")

# The measured tour: 30 waypoints, through the API like a ranger's script would add them.
tour=$(bench_tour "Aaron Ridge")
for i in $(seq 1 30); do
  bench_waypoint "$tour" "Stop $i" "44.$((370 + i))" "-122.$((100 + i))" >/dev/null
done

# Sign in to the panel once (the login form's CSRF token, then the session cookie) for the page timings.
python3 - "$base" "$work/cookie" <<'PY'
import http.client, re, sys, urllib.parse
base, out = sys.argv[1:]
host, port = base.removeprefix("http://").split(":")
conn = http.client.HTTPConnection(host, int(port))
conn.request("GET", "/login"); page = conn.getresponse(); html = page.read().decode()
cookies = {}
def absorb(response):
    for name, value in response.getheaders():
        if name.lower() == "set-cookie":
            pair = value.split(";", 1)[0]; cookies[pair.split("=", 1)[0]] = pair.split("=", 1)[1]
absorb(page)
token = re.search(r'name="_csrf" value="([^"]*)"', html).group(1)
body = urllib.parse.urlencode({"email": "author@trail.test", "password": "bench password 1234", "_csrf": token})
conn.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded",
                                       "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
answer = conn.getresponse(); answer.read(); absorb(answer)
assert answer.status == 303, f"sign-in failed: {answer.status}"
open(out, "w").write("; ".join(f"{k}={v}" for k, v in cookies.items()))
PY

# Times every route (30 keep-alive requests after 3 warm-up ones) and writes one JSON line per route to $2; with a
# third argument, also saves each route's 200 body into that folder (for the static reference).
measure() {
  python3 - "$base" "$1" "$requests" "$author" "$(cat "$work/cookie")" "$tour" "${2:-}" <<'PY'
import http.client, json, re, statistics, sys, time, urllib.parse
base, label, count, token, cookie, tour, save = sys.argv[1:]
host, port = base.removeprefix("http://").split(":")
conn = http.client.HTTPConnection(host, int(port))
def get(path, headers):
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()
api = {"Authorization": f"Bearer {token}"}
panel = {"Cookie": cookie}
# A page deep in the list: the cursor of the 10th page (or the last one there is).
path = "/api/v1/manage/tours?site=bench"
for _ in range(9):
    status, headers, body = get(path, api)
    link = headers.get("Link")
    if not link:
        break
    path = re.match(r"<([^>]*)>", link).group(1)
deep = path
routes = [
    ("API list, first page", "/api/v1/manage/tours?site=bench", api, 200),
    ("API list, page by cursor", deep, api, 200),
    ("API list, name search", "/api/v1/manage/tours?site=bench&q=ridge", api, 200),
    ("API list, state filter", "/api/v1/manage/tours?site=bench&state=published", api, 200),
    ("site page", "/sites/bench", panel, 200),
    ("site page, search", "/sites/bench?q=ridge", panel, 200),
    ("/visit", "/visit", {}, 200),
    ("/visit, 304", "/visit", None, 304),
    ("tour page, 30 waypoints", f"/tours/{tour}", panel, 200),
]
for name, path, headers, expected in routes:
    if headers is None:
        # The ETag of the page as it is now (a release a moment ago may still be settling in).
        headers = {"If-None-Match": get(path, {})[1]["ETag"]}
    times = []
    for i in range(3 + int(count)):
        start = time.perf_counter()
        status, _, body = get(path, headers)
        elapsed = (time.perf_counter() - start) * 1000
        assert status == expected, f"{name}: {status} {body[:200]!r}"
        if i >= 3:
            times.append(elapsed)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * len(times))) - 1)]
    print(json.dumps({"size": label, "route": name, "p50": statistics.median(times), "p95": p95, "bytes": len(body)}))
    if save and expected == 200:
        open(f"{save}/{len(name)}-{abs(hash(name)) % 10**8}.bin", "wb").write(body)
        with open(f"{save}/routes.txt", "a") as index:
            index.write(f"{name}\t{len(name)}-{abs(hash(name)) % 10**8}.bin\n")
PY
}

echo "timing at 1 tour ($requests requests per route) ..."
measure 1 >> "$work/results.jsonl"

echo "seeding 999 more tours of 30 waypoints and 99 more published packages ..."
python3 - "$data/trail.sqlite" "$package" <<'PY'
import random, sqlite3, sys, time
path, package = sys.argv[1:]
random.seed(11)
db = sqlite3.connect(path, timeout=30)
db.execute("PRAGMA foreign_keys = ON")
site = db.execute("SELECT id FROM site WHERE slug = 'bench'").fetchone()[0]
now = time.time()
words = ["Ridge", "Falls", "Lake", "Creek", "Meadow", "Canyon", "Butte", "Forest", "Loop", "Rim", "Spring", "Summit"]
states = ["draft"] * 6 + ["inReview"] * 2 + ["published"] * 2
with db:
    for n in range(1, 1000):
        name = f"{random.choice(words)} {random.choice(words)} {n:04d}"
        cursor = db.execute(
            "INSERT INTO tour (siteId, name, description, mapName, frameNorth, frameSouth, frameEast, frameWest, state, createdAt, updatedAt)"
            " VALUES (?, ?, 'A walk.', ?, 44.43, 44.36, -121.97, -122.28, ?, ?, ?)",
            (site, name, f"tour-{n}", states[n % 10], now - n, now - n))
        tour = cursor.lastrowid
        db.executemany(
            "INSERT INTO waypoint (tourId, name, position, latitude, longitude, description, createdAt, updatedAt)"
            " VALUES (?, ?, ?, ?, ?, '', ?, ?)",
            [(tour, f"Stop {i}", i, 44.37 + i / 1000, -122.1 - i / 1000, now, now) for i in range(1, 31)])
    # The other side of each timed pair: a site of one tour of 30 waypoints, as the 'bench' site was before the seeding.
    single = db.execute("SELECT id FROM site WHERE slug = 'single'").fetchone()[0]
    tour = db.execute(
        "INSERT INTO tour (siteId, name, description, mapName, frameNorth, frameSouth, frameEast, frameWest, state, createdAt, updatedAt)"
        " VALUES (?, 'Aaron Ridge', 'A long walk.', 'aaron-ridge', 44.43, 44.36, -121.97, -122.28, 'draft', ?, ?)",
        (single, now, now)).lastrowid
    db.executemany(
        "INSERT INTO waypoint (tourId, name, position, latitude, longitude, description, createdAt, updatedAt)"
        " VALUES (?, ?, ?, ?, ?, '', ?, ?)",
        [(tour, f"Stop {i}", i, 44.37 + i / 1000, -122.1 - i / 1000, now, now) for i in range(1, 31)])
    for n in range(1, 100):
        copy = f"{package}-{n:03d}"
        db.execute("INSERT INTO package (id, tourId, siteId, currentVersion, isVisible, createdAt, updatedAt)"
                   " SELECT ?, NULL, siteId, currentVersion, 1, createdAt, updatedAt FROM package WHERE id = ?", (copy, package))
        db.execute("INSERT INTO packageVersion (packageId, version, requestId, name, description, mapName, sha256, size, signature,"
                   " manifestJSON, releasedBy, createdAt) SELECT ?, version, NULL, ?, description, mapName, sha256, size, signature,"
                   " manifestJSON, releasedBy, createdAt FROM packageVersion WHERE packageId = ?", (copy, f"Released Walk {n:03d}", package))
print(db.execute("SELECT COUNT(*) FROM tour WHERE siteId = ?", (site,)).fetchone()[0], "tours,",
      db.execute("SELECT COUNT(*) FROM waypoint").fetchone()[0], "waypoints,",
      db.execute("SELECT COUNT(*) FROM package WHERE isVisible = 1").fetchone()[0], "published packages")
PY

echo "timing at 1,000 tours ..."
mkdir -p "$work/static"
measure 1000 "$work/static" >> "$work/results.jsonl"

echo "timing the site-scoped lists in pairs: the site of one tour against the site of 1,000, turn by turn ..."
python3 - "$base" "$requests" "$author" "$(cat "$work/cookie")" >> "$work/results.jsonl" <<'PY'
import http.client, json, re, statistics, sys, time
base, count, token, cookie = sys.argv[1:]
host, port = base.removeprefix("http://").split(":")
conn = http.client.HTTPConnection(host, int(port))
def get(path, headers):
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()
def timed(path, headers):
    start = time.perf_counter()
    status, _, body = get(path, headers)
    assert status == 200, f"{path}: {status} {body[:200]!r}"
    return (time.perf_counter() - start) * 1000
def deep(site):
    # The cursor of the 10th page (or the last one there is), as in the phases.
    path = f"/api/v1/manage/tours?site={site}"
    for _ in range(9):
        link = get(path, api)[1].get("Link")
        if not link:
            break
        path = re.match(r"<([^>]*)>", link).group(1)
    return path
api = {"Authorization": f"Bearer {token}"}
panel = {"Cookie": cookie}
routes = [
    ("API list, first page", lambda site: f"/api/v1/manage/tours?site={site}", api),
    ("API list, page by cursor", deep, api),
    ("API list, name search", lambda site: f"/api/v1/manage/tours?site={site}&q=ridge", api),
    ("API list, state filter", lambda site: f"/api/v1/manage/tours?site={site}&state=published", api),
    ("site page", lambda site: f"/sites/{site}", panel),
    ("site page, search", lambda site: f"/sites/{site}?q=ridge", panel),
]
for name, path, headers in routes:
    one, many = path("single"), path("bench")
    for _ in range(3):
        timed(one, headers); timed(many, headers)
    ones, manys, ratios = [], [], []
    for turn in range(int(count)):
        if turn % 2 == 0:
            a = timed(one, headers); b = timed(many, headers)
        else:
            b = timed(many, headers); a = timed(one, headers)
        ones.append(a); manys.append(b); ratios.append(b / a)
    print(json.dumps({"size": "pair", "route": name, "one": statistics.median(ones), "many": statistics.median(manys),
                      "ratio": statistics.median(ratios)}))
PY

# The reference: nginx (the deployed file's settings) serving the same bytes as static files, timed the same way.
ref_port=$(bench_free_port)
bench_deployed_nginx "$work/nginx" "$(bench_free_port)" "server { listen 127.0.0.1:$ref_port; root $work/static; location / { default_type text/html; } }"
python3 - "$ref_port" "$work/static/routes.txt" "$requests" >> "$work/results.jsonl" <<'PY'
import http.client, json, statistics, sys, time
port, index, count = sys.argv[1:]
conn = http.client.HTTPConnection("127.0.0.1", int(port))
for line in open(index):
    name, file = line.rstrip("\n").split("\t")
    times = []
    for i in range(3 + int(count)):
        start = time.perf_counter()
        conn.request("GET", "/" + file); response = conn.getresponse(); response.read()
        if i >= 3:
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * len(times))) - 1)]
    print(json.dumps({"size": "static", "route": name, "p50": statistics.median(times), "p95": p95}))
PY

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# The server's memory after every route at 1,000 tours: the peak resident set and the current one (goal: under 200 MiB).
echo "server memory: peak $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' "/proc/$server_pid/status"), now $(awk '/VmRSS/ {printf "%.0f MiB", $2 / 1024}' "/proc/$server_pid/status")"
python3 - "$work/results.jsonl" <<'PY'
import json, os, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by = {(r["size"], r["route"]): r for r in rows}
routes = list(dict.fromkeys(r["route"] for r in rows))
print(f"\n{'route':28} {'p50 @1':>8} {'p95 @1':>8} {'p50 @1000':>10} {'p95 @1000':>10} {'phases':>7} {'pairs':>6} {'static p50':>11} {'bytes':>8}  goals")
met_all = True
for route in routes:
    one, many, static, pair = by.get(("1", route)), by.get(("1000", route)), by.get(("static", route)), by.get(("pair", route))
    phases = many["p50"] / one["p50"]
    # The goal's ratio: the paired one where the route has a one-tour twin (the site-scoped lists), else the phases'.
    ratio = pair["ratio"] if pair else phases
    is_list = not route.startswith("tour page")
    met = (many["p95"] < 20 and ratio <= 2) if is_list else many["p95"] < 20
    met_all &= met
    print(f"{route:28} {one['p50']:8.2f} {one['p95']:8.2f} {many['p50']:10.2f} {many['p95']:10.2f} {phases:7.2f} {(pair['ratio'] if pair else float('nan')):6.2f} "
          f"{(static['p50'] if static else float('nan')):11.2f} {many['bytes']:8}  {'met' if met else 'NOT met'}")
    if os.environ.get("BENCH_RESULTS"):
        with open(os.environ["BENCH_RESULTS"], "a") as out:
            reference = f"nginx static {static['p50']:.2f} ms" if static else "-"
            out.write(f"district, {route}: p50/p95 at 1,000 tours\t{many['p50']:.1f}/{many['p95']:.1f} ms\t{reference}\t{ratio:.2f} (p50 vs 1 tour, {'pair by pair' if pair else 'phases'})\t"
                      f"p95 < 20 ms{', ratio ≤ 2' if is_list else ''}\t{'yes' if met else 'no'}\n")
print("\ngoals met" if met_all else "\ngoals NOT all met")
PY
