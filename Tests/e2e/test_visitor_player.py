"""The visitor web player in Chromium: a visitor opens a published tour, the player checks the signed catalog and
manifest, saves the tour for offline use, and keeps working after the server is gone (map tiles, stops, audio from
Cache Storage through the service worker). Chromium's geolocation override puts the visitor inside a stop's
trigger zone: the stop opens and its audio plays. A new version with one changed file is fetched by that file alone,
and a file changed in Cache Storage is refused. The faults a visitor meets each get their own test: a language
choice, a full phone, a connection lost halfway through saving and during an update, a tour withdrawn while saved, a
saved manifest that fails its signature, and a map tile the server lacks. axe checks every state of the player.

This module runs its own server (its own data folder and port), since it stops and restarts it; the page's origin
stays the same across the restart, so the service worker and the saved copy are found again."""
from __future__ import annotations

import http.client
import io
import json
import math
import re
import sqlite3
import struct
import subprocess
import threading
import urllib.error
import urllib.request
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import mercantile
import pytest

from support import Api, ApiError, Panel, Server, chrome, set_viewport, wait_for, write_signatures, png_bytes

FRAME = {"north": 44.404, "south": 44.396, "east": -122.044, "west": -122.056}
FIRST_STOP = (44.4000, -122.0500)
SECOND_STOP = (44.4020, -122.0470)
RADIUS = 40
PASSWORD = "visitor-test-password-1"


def wav_bytes(seconds: float = 4.0, rate: int = 8000) -> bytes:
    """A real, decodable WAV: a quiet 440 Hz tone."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(2 * math.pi * 440 * i / rate))) for i in range(int(seconds * rate))))
    return buffer.getvalue()


def write_mbtiles(path) -> int:
    """An MBTiles 1.3 file covering the frame at zoom 13–16 (TMS rows), one small PNG per tile."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE metadata (name TEXT, value TEXT);
        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
        CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
    """)
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "Visitor test"), ("format", "png"), ("minzoom", "13"),
                                                          ("maxzoom", "16"), ("bounds", f"{FRAME['west']},{FRAME['south']},{FRAME['east']},{FRAME['north']}")])
    count = 0
    for tile in mercantile.tiles(FRAME["west"], FRAME["south"], FRAME["east"], FRAME["north"], range(13, 17)):
        db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (tile.z, tile.x, (1 << tile.z) - 1 - tile.y, png_bytes(256, 256)))
        count += 1
    db.commit()
    db.close()
    return count


def public(server: Server, path: str):
    with urllib.request.urlopen(f"{server.base_url}{path}", timeout=30) as response:
        return response.read(), response.headers


def start_visit_server(server: Server) -> Server:
    """Starts `server` with the falls site, its ranger (a manager) and reviewer, and an admin whose token reads /metrics
    (the server's own count of the bytes its file route sent)."""
    server.start()
    server.cli("site", "create", "--slug", "falls", "--name", "Falls District")
    for email, role in (("ranger@falls.test", "manager"), ("reviewer@falls.test", "reviewer")):
        server.cli("user", "create", "--email", email, "--name", email.split("@")[0].title(), "--password", PASSWORD)
        server.cli("member", "add", "--site", "falls", "--email", email, "--role", role)
    server.cli("user", "create", "--email", "ops@falls.test", "--name", "Ops", "--password", PASSWORD, "--admin")
    server.metrics_token = server.create_token("ops@falls.test")
    return server


@pytest.fixture(scope="module")
def visit_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("visit-data")
    server = Server(data, demo=False, extra_args=("--clamav-db", str(write_signatures(tmp_path_factory.mktemp("visit-clamav")))))
    try:
        yield start_visit_server(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def rangers(visit_server):
    return Api(visit_server.base_url, visit_server.create_token("ranger@falls.test")), \
        Api(visit_server.base_url, visit_server.create_token("reviewer@falls.test"))


def release(author: Api, reviewer: Api, tour_id: int) -> dict:
    """Submit, let the package build, approve, push: the tour's next version is published."""
    request_id = author.post(f"/manage/tours/{tour_id}/publish", {})["requestId"]
    wait_for("the package build", lambda: author.publish_request(request_id)["state"] not in ("building", "draft"), timeout=180)
    assert author.publish_request(request_id)["state"] == "pending", author.publish_request(request_id)
    reviewer.post(f"/manage/publish-requests/{request_id}/approve", {"comment": "Fine."})
    author.post(f"/manage/publish-requests/{request_id}/push", {})
    return author.publish_request(request_id)


@pytest.fixture(scope="module")
def published(visit_server, rangers, tmp_path_factory):
    author, reviewer = rangers
    tour = author.create_tour("falls", "Koosah Falls Walk", frame=FRAME, description="A short walk to the falls.")
    first = author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": "Trailhead", "latitude": FIRST_STOP[0], "longitude": FIRST_STOP[1],
                                                                  "description": "Listen to the river.", "triggerRadiusMeters": RADIUS})
    second = author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": "Overlook", "latitude": SECOND_STOP[0], "longitude": SECOND_STOP[1],
                                                                   "description": "The falls below.", "triggerRadiusMeters": RADIUS})
    audio = author.upload(tour["id"], first["id"], "river.wav", wav_bytes())
    assert author.scanned_asset(audio["id"])["scanStatus"] == "clean"
    image = author.upload(tour["id"], second["id"], "falls.png", png_bytes())
    assert author.scanned_asset(image["id"])["scanStatus"] == "clean"
    mbtiles = tmp_path_factory.mktemp("visit-tiles") / "falls.mbtiles"
    tile_count = write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{tour['id']}/tiles", "falls.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{tour['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    author.patch(f"/manage/tours/{tour['id']}", {"minZoom": 13, "maxZoom": 16})
    release(author, reviewer, tour["id"])
    catalog = json.loads(public(visit_server, "/api/v1/catalog")[0])
    entry = next(p for p in catalog["packages"] if p["name"] == "Koosah Falls Walk")
    return {"tour": tour, "package": entry["id"], "audio": audio, "tile_count": tile_count}


@pytest.fixture
def visitor(visit_server):
    driver = chrome(arguments=("--autoplay-policy=user-gesture-required",))
    set_viewport(driver, 390, 844, mobile=True)
    try:
        yield Panel(driver, visit_server)
    finally:
        driver.quit()


def state(panel: Panel) -> str:
    return panel.find("#player").get_attribute("data-offline-state")


def wait_state(panel: Panel, *wanted: str, timeout: float = 60) -> str:
    panel.wait(timeout).until(lambda d: d.execute_script(
        "return document.getElementById('player')?.dataset.offlineState") in wanted)
    return state(panel)


def manifest(server: Server, package: str, version: int) -> dict:
    return json.loads(public(server, f"/api/v1/packages/{package}/versions/{version}/manifest")[0])


def files_with_sizes(manifest: dict) -> list[dict]:
    files = []
    for waypoint in manifest["waypoints"]:
        for asset in waypoint["assets"]:
            files.append(asset)
            files.extend(asset[role] for role in ("captions", "transcript") if asset.get(role))
    return files + [manifest["geoJSON"], manifest["tiles"]["index"]]


def listed(manifest: dict) -> dict[str, str]:
    """path → sha256 of every file the player saves (the MBTiles itself aside)."""
    files = {}
    for waypoint in manifest["waypoints"]:
        for asset in waypoint["assets"]:
            files[asset["path"]] = asset["sha256"]
            for role in ("captions", "transcript"):
                if asset.get(role):
                    files[asset[role]["path"]] = asset[role]["sha256"]
    files[manifest["geoJSON"]["path"]] = manifest["geoJSON"]["sha256"]
    files[manifest["tiles"]["index"]["path"]] = manifest["tiles"]["index"]["sha256"]
    return files


def metric(server: Server, series: str) -> int:
    """One series of the server's /metrics (Prometheus text, read with an admin's token), 0 before it exists."""
    request = urllib.request.Request(f"{server.base_url}/metrics")
    request.add_header("Authorization", f"Bearer {server.metrics_token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    match = re.search(rf"^{re.escape(series)} (\d+(?:\.\d+)?)", text, re.MULTILINE)
    return int(float(match.group(1))) if match else 0


def file_bytes_sent(server: Server) -> int:
    """What the server counted for GET /api/v1/files/{sha256} since it started."""
    return metric(server, 'trail_download_bytes_total{route="file"}')


def resource_requests(panel: Panel, fragment: str) -> list[str]:
    return panel.driver.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes(arguments[0]))", fragment)


def test_the_list_shows_the_published_tour(visit_server, published, visitor):
    visitor.open("/visit")
    card = visitor.find(f"[data-package-id='{published['package']}']")
    assert "Koosah Falls Walk" in card.text
    assert visitor.find(f"[data-package-id='{published['package']}'] [data-fact='stops']").text == "2"
    assert visitor.horizontal_overflow() == 0
    visitor.assert_accessible("visitor list of tours")
    visitor.screenshot("visitor-list")


def test_save_offline_play_from_the_cache_triggers_updates_and_tampering(visit_server, rangers, published, visitor, tmp_path):
    panel, driver, package = visitor, visitor.driver, published["package"]
    v1 = manifest(visit_server, package, 1)
    assert v1["tiles"]["index"]["path"] == "tiles/index.json", "the signed manifest lists the tile index"

    # Online, not saved: the signature is checked, the stops and the map are shown from the verified manifest.
    panel.open(f"/visit/{package}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    assert panel.find("#player").get_attribute("data-verified") == "true"
    assert [e.get_attribute("data-stop-order") for e in panel.all("[data-stop]")] == ["1", "2"]
    panel.assert_accessible("player, online only", media=False)

    # Save for offline use: a progress bar while saving, then ready; every file is in Cache Storage.
    driver.execute_script("performance.setResourceTimingBufferSize(100000); performance.clearResourceTimings()")
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert panel.find("#save-progress-bar").get_attribute("value") == panel.find("#save-progress-bar").get_attribute("max")
    tiles_fetched = resource_requests(panel, "/versions/1/tiles/")
    assert len(set(tiles_fetched)) == v1["tiles"]["tileCount"] > 0, "every tile the index lists was fetched"
    panel.assert_accessible("player, saved for offline use", media=False)
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)

    # The server stops; a reload still shows the player: the page, the map tiles, the stops and the audio come from the cache.
    visit_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        assert panel.find("#player").get_attribute("data-verified") == "true"
        panel.wait(30).until(lambda d: d.execute_script("return document.querySelectorAll('#visit-map img.leaflet-tile-loaded').length") > 0)
        assert len(panel.all("[data-stop]")) == 2
        assert len(panel.all("#visit-map path.visit-zone")) == 2, "each stop's trigger zone is drawn"
        # The worker answers Range requests from the cached file (what audio and video seeking asks for).
        audio_v1 = next(a for w in v1["waypoints"] for a in w["assets"] if a["type"] == "audio")
        part = driver.execute_async_script("""
            const [sha, done] = arguments;
            fetch('/api/v1/files/' + sha, {headers: {Range: 'bytes=8-15'}})
              .then(async (r) => done([r.status, r.headers.get('Content-Range'), new TextDecoder().decode(await r.arrayBuffer())]),
                    (e) => done([0, String(e), '']));
        """, audio_v1["sha256"])
        assert part == [206, f"bytes 8-15/{audio_v1['size']}", "WAVEfmt "], part
        panel.screenshot("visitor-map")

        # Inside the first stop's trigger zone: it becomes active, opens, and its audio plays (served by the worker, with Range).
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": visit_server.base_url, "permissions": ["geolocation"]})
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": FIRST_STOP[0] + 0.0001, "longitude": FIRST_STOP[1], "accuracy": 5})
        panel.find("[data-action='start']").click()
        panel.wait(30).until(lambda d: d.find_elements("css selector", "[data-stop-order='1'][data-active]"))
        assert not panel.all("[data-stop-order='2'][data-active]")
        panel.wait(30).until(lambda d: d.execute_script(
            "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return a && !a.paused && a.currentTime > 0.2"))
        assert "Listen to the river." in panel.text("[data-stop-order='1']")
        assert "Transcript" in panel.text("[data-stop-order='1']")
        panel.screenshot("visitor-stop")
        # The button says that the player follows the position; pressed again, it stops following.
        start = panel.find("[data-action='start']")
        assert start.get_attribute("data-tracking") == "on" and start.text == "Stop following my position"
        start.click()
        panel.wait(10).until(lambda d: start.get_attribute("data-tracking") == "off")
        assert start.text == "Start the tour" and "Location is off" in panel.text("#location-status")
        # The image of the other stop, tapped, shows with its alt text.
        panel.find("[data-stop-order='2'] button").click()
        panel.wait(15).until(lambda d: d.execute_script(
            "const i = document.querySelector('[data-stop-order=\"2\"] img'); return i && i.complete && i.naturalWidth > 0"))
        assert panel.find("[data-stop-order='2'] img").get_attribute("alt").startswith("A test picture")
        panel.assert_accessible("player offline, at a stop", media=False)
        assert panel.horizontal_overflow() == 0
    finally:
        visit_server.start()

    # A new version with one changed file (the audio's transcript): the update fetches only the files it does not hold.
    author, reviewer = rangers
    author.post(f"/manage/assets/{published['audio']['id']}/transcript", {"text": "The river runs high in spring."})
    wait_for("the new transcript's scan", lambda: (author.get(f"/manage/assets/{published['audio']['id']}").get("transcript") or {})
             .get("scanStatus") == "clean")
    release(author, reviewer, published["tour"]["id"])
    v2 = manifest(visit_server, package, 2)
    old, new = listed(v1), listed(v2)
    changed = {sha for sha in new.values() if sha not in set(old.values())}
    transcript_path = next(a["transcript"]["path"] for w in v2["waypoints"] for a in w["assets"] if a.get("transcript"))
    assert new[transcript_path] in changed and len(changed) <= 2, changed  # the transcript (and the GeoJSON, if it names files)
    driver.refresh()
    assert wait_state(panel, "update-available", "failed") == "update-available", panel.text("#player")
    panel.assert_accessible("player, update available", media=False)
    sizes = {f["sha256"]: f["size"] for f in files_with_sizes(v2)}
    before = file_bytes_sent(visit_server)
    panel.find("[data-action='update']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert "version 2" in panel.text("#offline-status")
    sent = file_bytes_sent(visit_server) - before
    assert sent == sum(sizes[sha] for sha in changed), f"the server sent {sent} bytes of files; the changed files have {sum(sizes[sha] for sha in changed)}"

    # A catalog older than the newest one this browser verified is refused; the saved copy stays in use.
    held_catalog = driver.execute_script("return localStorage.getItem('trail.catalogVersion')")
    driver.execute_script("localStorage.setItem('trail.catalogVersion', '1000000')")
    driver.refresh()
    panel.wait(30).until(lambda d: "older than catalog 1000000" in d.find_element("css selector", "#offline-error").text)
    assert state(panel) == "ready" and "version 2" in panel.text("#offline-status")
    driver.execute_script("localStorage.setItem('trail.catalogVersion', arguments[0])", held_catalog)

    # A file changed in Cache Storage is refused at the next start: the player says which, and does not play it.
    audio_sha = next(a["sha256"] for w in v2["waypoints"] for a in w["assets"] if a["type"] == "audio")
    driver.execute_async_script("""
        const [sha, done] = arguments;
        (async () => {
          const cache = await caches.open('trail-files');
          const url = '/api/v1/files/' + sha;
          const stored = await cache.match(url);
          const bytes = new Uint8Array(await stored.arrayBuffer());
          bytes[bytes.length - 10] ^= 0xff;
          await cache.put(url, new Response(bytes, {headers: stored.headers}));
        })().then(() => done(true), (e) => done(String(e)));
    """, audio_sha)
    driver.refresh()
    assert wait_state(panel, "failed", "ready") == "failed"
    audio_path = next(a["path"] for w in v2["waypoints"] for a in w["assets"] if a["type"] == "audio")
    assert audio_path in panel.text("#offline-error")
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(15).until(lambda d: "failed its check" in d.find_element("css selector", "[data-stop-order='1']").text)
    assert not panel.all("[data-stop-order='1'] audio[data-stop-audio]"), "a file that failed its check is not played"
    panel.assert_accessible("player, a saved file failed its check", media=False)


def test_a_denied_location_leaves_the_stops_usable(visit_server, published, visitor):
    panel, driver = visitor, visitor.driver
    driver.execute_cdp_cmd("Browser.setPermission", {"origin": visit_server.base_url, "permission": {"name": "geolocation"}, "setting": "denied"})
    open_verified(panel, published["package"])
    panel.find("[data-action='start']").click()
    panel.wait(15).until(lambda d: "Tap a stop" in d.find_element("css selector", "#location-status").text)
    # Nothing to follow: the button offers to start again rather than to stop.
    panel.wait(15).until(lambda d: d.find_element("css selector", "[data-action='start']").get_attribute("data-tracking") == "off")
    set_viewport(driver, 320, 640, mobile=True)
    assert panel.horizontal_overflow() == 0
    panel.find("[data-stop-order='2'] button").click()
    panel.wait(15).until(lambda d: d.execute_script(
        "const i = document.querySelector('[data-stop-order=\"2\"] img'); return i && i.complete && i.naturalWidth > 0"))
    panel.assert_accessible("player at 320 px, location denied", media=False)
    # Large text (the browser's default font size doubled, as a visitor's text-size setting does): still no sideways
    # scrolling at 320 px, and the stop buttons stay whole on screen.
    driver.execute_cdp_cmd("Page.setFontSizes", {"fontSizes": {"standard": 32, "fixed": 26}})
    panel.wait(10).until(lambda d: d.execute_script("return parseFloat(getComputedStyle(document.documentElement).fontSize)") >= 32)
    assert panel.horizontal_overflow() == 0
    for stop in panel.all("[data-stop] button"):
        assert panel.in_view_horizontally(stop), stop.text
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(15).until(lambda d: d.find_element("css selector", "[data-stop-order='1'] .visit-stop-body").is_displayed())
    panel.assert_accessible("player at 320 px with large text", media=False)


def test_a_withdrawn_tour_says_so(visit_server, rangers, published, visitor):
    author, _ = rangers
    author.post(f"/manage/packages/{published['package']}/unpublish", {})
    try:
        visitor.open(f"/visit/{published['package']}")
        assert visitor.find("[data-withdrawn]").text.startswith("The park has taken this tour down")
        visitor.assert_accessible("player, tour withdrawn")
    finally:
        author.post(f"/manage/packages/{published['package']}/publish", {})


@pytest.fixture(scope="module")
def bilingual(visit_server, rangers, tmp_path_factory):
    """A second tour, in English and Spanish, with an audio stop and map tiles: for the language choice, a full
    phone, a failed update and the download count (each test starts with a browser of its own)."""
    author, reviewer = rangers
    tour = author.create_tour("falls", "Sahalie Falls Loop", frame=FRAME, description="A loop past two falls.")
    author.patch(f"/manage/tours/{tour['id']}", {"languages": ["en", "es"], "minZoom": 13, "maxZoom": 16})
    first = author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": "Bridge", "latitude": FIRST_STOP[0], "longitude": FIRST_STOP[1],
                                                                  "description": "Cross the river here.", "triggerRadiusMeters": RADIUS})
    author.patch(f"/manage/tours/{tour['id']}/waypoints/{first['id']}",
                 {"localized": {"es": {"name": "Puente", "description": "Cruce el río aquí."}}})
    audio = author.upload(tour["id"], first["id"], "bridge.wav", wav_bytes(seconds=2.0))
    assert author.scanned_asset(audio["id"])["scanStatus"] == "clean"
    mbtiles = tmp_path_factory.mktemp("bilingual-tiles") / "loop.mbtiles"
    write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{tour['id']}/tiles", "loop.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{tour['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    release(author, reviewer, tour["id"])
    catalog = json.loads(public(visit_server, "/api/v1/catalog")[0])
    entry = next(p for p in catalog["packages"] if p["name"] == "Sahalie Falls Loop")
    return {"tour": tour, "package": entry["id"], "audio": audio}


def verified_downloads(server: Server) -> int:
    """The server's count of checked downloads (apps and the player report them)."""
    return metric(server, "trail_verified_downloads")


def open_verified(panel: Panel, package: str) -> None:
    """Opens the player and waits for "online-only": the signature checked, the stops shown and the save button wired
    (data-verified turns true a moment earlier, before the button does anything)."""
    panel.open(f"/visit/{package}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    assert panel.find("#player").get_attribute("data-verified") == "true"


def test_the_language_choice_switches_the_stops_and_the_page_language(visit_server, bilingual, visitor):
    panel = visitor
    open_verified(panel, bilingual["package"])
    select = panel.find("select#language")
    assert [o.get_attribute("value") for o in select.find_elements("css selector", "option")] == ["en", "es"]
    assert panel.find("label[for='language']").text == "Language"
    assert panel.text("[data-stop-order='1'] button") == "1. Bridge"
    assert panel.find("#visit-map [data-marker-order='1']").get_attribute("aria-label") == "Stop 1: Bridge"
    panel.driver.execute_script("const s = document.getElementById('language'); s.value = 'es'; s.dispatchEvent(new Event('change'))")
    panel.wait(15).until(lambda d: d.find_element("css selector", "[data-stop-order='1'] button").text == "1. Puente")
    assert panel.driver.execute_script("return document.documentElement.lang") == "es"
    assert panel.find("#visit-map [data-marker-order='1']").get_attribute("aria-label") == "Stop 1: Puente", "the map names the stop in Spanish too"
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(15).until(lambda d: "Cruce el río aquí." in d.find_element("css selector", "[data-stop-order='1']").text)
    panel.assert_accessible("player, in Spanish", media=False)


def test_a_failed_update_keeps_the_saved_version_and_saves_count_as_downloads(visit_server, rangers, bilingual, visitor):
    panel, driver, package = visitor, visitor.driver, bilingual["package"]
    counted = verified_downloads(visit_server)
    open_verified(panel, package)
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert "version 1" in panel.text("#offline-status")
    wait_for("the player's checked download to count", lambda: verified_downloads(visit_server) == counted + 1, timeout=30)

    author, reviewer = rangers
    author.post(f"/manage/assets/{bilingual['audio']['id']}/transcript", {"text": "The bridge was rebuilt after the flood."})
    wait_for("the new transcript's scan", lambda: (author.get(f"/manage/assets/{bilingual['audio']['id']}").get("transcript") or {})
             .get("scanStatus") == "clean")
    release(author, reviewer, bilingual["tour"]["id"])
    driver.refresh()
    assert wait_state(panel, "update-available", "failed") == "update-available", panel.text("#player")

    # The connection drops before the update's files come: the update fails, says so, and version 1 stays in use.
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)
    visit_server.stop()
    try:
        panel.find("[data-action='update']").click()
        assert wait_state(panel, "failed", "ready", timeout=60) == "failed"
        assert panel.text("#offline-error") == "The update stopped: the connection was lost. Version 1 is kept as it was."
        assert "Version 1 is saved on this phone." in panel.text("#offline-status")
        assert panel.find("[data-action='retry']").is_displayed(), "a way to try again"
        panel.assert_accessible("player, an update that failed", media=False)
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        assert "version 1" in panel.text("#offline-status")
        panel.find("[data-stop-order='1'] button").click()
        panel.wait(15).until(lambda d: d.execute_script(
            "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return !!(a && a.src)"))
    finally:
        visit_server.start()

    # With the connection back, the update goes through, and version 2 counts as a download of its own.
    driver.refresh()
    assert wait_state(panel, "update-available", "failed") == "update-available", panel.text("#player")
    panel.find("[data-action='update']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert "version 2" in panel.text("#offline-status")
    wait_for("the update's checked download to count", lambda: verified_downloads(visit_server) == counted + 2, timeout=30)


def test_a_full_phone_gets_a_clear_message_and_nothing_half_saved(visit_server, bilingual, visitor):
    panel, driver = visitor, visitor.driver
    open_verified(panel, bilingual["package"])
    # Chromium's own quota for this origin, set to a few bytes: Cache Storage refuses the first file.
    driver.execute_cdp_cmd("Storage.overrideQuotaForOrigin", {"origin": visit_server.base_url, "quotaSize": 16})
    try:
        panel.find("[data-action='save-offline']").click()
        assert wait_state(panel, "ready", "failed", timeout=60) == "failed"
        assert "no room left for the tour" in panel.text("#offline-error"), panel.text("#offline-error")
        assert "The tour is not saved yet." in panel.text("#offline-status")
        panel.assert_accessible("player, no room left", media=False)
    finally:
        driver.execute_cdp_cmd("Storage.overrideQuotaForOrigin", {"origin": visit_server.base_url})
    # Nothing half-saved is taken for a saved tour.
    driver.refresh()
    assert wait_state(panel, "online-only", "ready", "failed") == "online-only", panel.text("#player")


def saved_page(driver, package: str) -> str:
    """The HTML of the tour's page as the service worker keeps it for a saved tour."""
    return driver.execute_async_script("""
        const [path, done] = arguments;
        caches.open('trail-pages').then((pages) => pages.match(path)).then(async (r) => done(r ? await r.text() : null), (e) => done(String(e)));
    """, f"/visit/{package}")


def test_a_saved_tour_opens_from_its_saved_page_even_one_from_before_a_player_upgrade(visit_server, bilingual, visitor):
    panel, driver, package = visitor, visitor.driver, bilingual["package"]
    open_verified(panel, package)
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)
    current = driver.execute_script("return new URL(document.querySelector('script[type=module]').src).pathname.split('/')[3]")
    stops = len(panel.all("[data-stop]"))
    assert stops > 0
    page = saved_page(driver, package)
    assert f"/visit/assets/{current}/" in page

    # The page as an older server wrote it: it names player files under a version this server no longer has.
    older = "0123456789abcdef0123"
    driver.execute_async_script("""
        const [path, html, done] = arguments;
        caches.open('trail-pages')
          .then((pages) => pages.put(path, new Response(html, {headers: {'Content-Type': 'text/html; charset=utf-8'}})))
          .then(() => done(true), (e) => done(String(e)));
    """, f"/visit/{package}", page.replace(f"/visit/assets/{current}/", f"/visit/assets/{older}/"))
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(f"{visit_server.base_url}/visit/assets/{older}/visit-player.js", timeout=10)
    assert gone.value.code == 404, "the server keeps only its own version of the player's files"

    # Offline, it is answered from the cache, and its older player files are the current ones of the same name.
    visit_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        assert driver.execute_script("return document.querySelector('script[type=module]').src").endswith(f"/{older}/visit-player.js")
        assert len(panel.all("[data-stop]")) == stops
    finally:
        visit_server.start()

    # Online, the saved page still answers first (nothing waits for the network), and is refreshed behind it.
    driver.refresh()
    assert wait_state(panel, "ready", "update-available", "failed") != "failed", panel.text("#player")
    wait_for("the saved page to be refreshed", lambda: f"/visit/assets/{current}/" in (saved_page(driver, package) or ""), timeout=30)
    driver.refresh()
    assert wait_state(panel, "ready", "update-available", "failed") != "failed", panel.text("#player")
    assert f"/{current}/visit-player.js" in driver.execute_script("return document.querySelector('script[type=module]').src")


def cached_files(driver) -> set[str]:
    """The SHA-256 of every file in the player's Cache Storage."""
    return set(driver.execute_async_script("""
        const done = arguments[0];
        caches.open('trail-files').then((cache) => cache.keys())
          .then((keys) => done(keys.map((r) => new URL(r.url).pathname).filter((p) => p.startsWith('/api/v1/files/')).map((p) => p.slice(14))),
                (e) => done([String(e)]));
    """))


def test_a_connection_lost_halfway_through_saving_then_a_withdrawal_and_a_forged_manifest(visit_server, rangers, bilingual, visitor):
    panel, driver, package = visitor, visitor.driver, bilingual["package"]
    served = manifest(visit_server, package, 2)
    sizes = {f["sha256"]: f["size"] for f in files_with_sizes(served)}
    audio = next(a for w in served["waypoints"] for a in w["assets"] if a["type"] == "audio")
    # The page's own requests, past the service worker, so that Chromium's URL blocking reaches them: the audio file's
    # request fails as a dropped connection does, after the files before it were saved.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBypassServiceWorker", {"bypass": True})
    # Nor does the browser's HTTP cache answer (the map's tile index, read before saving, would come from it): what
    # the server sends is then exactly what the player fetched.
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [f"*/api/v1/files/{audio['sha256']}*"]})
    open_verified(panel, package)
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "failed"
    assert panel.text("#offline-error") == "Saving stopped: the connection was lost."
    assert "The tour is not saved yet." in panel.text("#offline-status")
    held = cached_files(driver)
    assert audio["sha256"] not in held
    assert held <= set(sizes), "only whole, checked files of this version are in Cache Storage"

    # The connection is back: Try again fetches only what is not saved yet, and the tour is ready.
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    before = file_bytes_sent(visit_server)
    panel.find("[data-action='retry']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert file_bytes_sent(visit_server) - before == sum(size for sha, size in sizes.items() if sha not in held)
    driver.execute_cdp_cmd("Network.setBypassServiceWorker", {"bypass": False})

    # The park withdraws the tour while this phone holds it: the player says so and the saved copy goes on working.
    author, _ = rangers
    author.post(f"/manage/packages/{package}/unpublish", {})
    try:
        driver.refresh()
        panel.wait(60).until(lambda d: "The park has withdrawn this tour" in d.find_element("css selector", "#offline-status").text)
        assert "Your saved copy still works." in panel.text("#offline-status")
        assert state(panel) == "ready" and panel.find("#player").get_attribute("data-withdrawn") == "true"
        panel.find("[data-stop-order='1'] button").click()
        panel.wait(15).until(lambda d: d.execute_script(
            "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return !!(a && a.src)"))
        panel.assert_accessible("player, withdrawn while saved", media=False)
    finally:
        author.post(f"/manage/packages/{package}/publish", {})

    # A saved manifest changed in Cache Storage no longer matches its signature: the player refuses the saved copy.
    driver.execute_async_script("""
        const [url, done] = arguments;
        (async () => {
          const cache = await caches.open('trail-files');
          const stored = await cache.match(url);
          const text = (await stored.text()).replace('Sahalie Falls Loop', 'Sahalie Falls Loup');
          await cache.put(url, new Response(text, {headers: stored.headers}));
        })().then(() => done(true), (e) => done(String(e)));
    """, f"/api/v1/packages/{package}/versions/2/manifest")
    driver.refresh()
    # Refused, and said so; online, the player then offers the tour from the server, unsaved, to be saved again.
    panel.wait(60).until(lambda d: "The tour manifest is not signed by this server's key" in d.find_element("css selector", "#offline-error").text)
    panel.wait(60).until(lambda d: state(panel) == "online-only")
    assert "The tour manifest is not signed by this server's key: it was not used." in panel.text("#offline-error")
    assert "Not saved yet" in panel.text("#offline-status")
    panel.assert_accessible("player, a saved manifest that fails its signature", media=False)


class MissingTileProxy:
    """The server seen through a proxy that answers 404 for the paths in `missing` (a map tile the server lacks) and
    passes everything else on. The player opened through it has an origin of its own: its own worker and storage."""

    HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}

    def __init__(self, server: Server):
        self.missing: set[str] = set()
        proxy = self
        target = server.base_url.removeprefix("http://")

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def relay(self):
                if self.path.split("?")[0] in proxy.missing:
                    body = b"No such tile in this map."
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                upstream = http.client.HTTPConnection(target, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in self.HOP_HEADERS}
                upstream.request(self.command, self.path, body=self.rfile.read(length) if length else None, headers=headers)
                answer = upstream.getresponse()
                body = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in self.HOP_HEADERS and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                upstream.close()

            HOP_HEADERS = MissingTileProxy.HOP
            do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = relay

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_tile_the_server_lacks_stops_the_save_with_its_name_and_keeps_what_was_saved(visit_server, bilingual):
    proxy = MissingTileProxy(visit_server)
    driver = chrome(arguments=("--autoplay-policy=user-gesture-required",))
    try:
        set_viewport(driver, 390, 844, mobile=True)
        panel = Panel(driver, visit_server)
        package = bilingual["package"]
        catalog = json.loads(public(visit_server, "/api/v1/catalog")[0])
        version = next(p["version"] for p in catalog["packages"] if p["id"] == package)
        served = manifest(visit_server, package, version)
        index = json.loads(public(visit_server, f"/api/v1/files/{served['tiles']['index']['sha256']}")[0])
        z, x, y = sorted(index["tiles"])[-1].split("/")
        proxy.missing.add(f"/api/v1/packages/{package}/versions/{version}/tiles/{z}/{x}/{y}")
        driver.get(f"{proxy.base_url}/visit/{package}")
        assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
        panel.find("[data-action='save-offline']").click()
        assert wait_state(panel, "ready", "failed", timeout=120) == "failed"
        assert panel.text("#offline-error") == f"Saving stopped: map tile {z}/{x}/{y} could not be fetched (HTTP 404)."
        assert "The tour is not saved yet." in panel.text("#offline-status")
        held = cached_files(driver)
        assert {f["sha256"] for f in files_with_sizes(served)} <= held, "the files saved before the tile stay saved"
        panel.assert_accessible("player, a map tile missing", media=False)

        # The tile is back: Try again completes the save.
        proxy.missing.clear()
        panel.find("[data-action='retry']").click()
        assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    finally:
        driver.quit()
        proxy.close()


def test_a_video_stop_by_keyboard_with_captions_and_speeds(visit_server, rangers, visitor, tmp_path):
    """A stop with a video (made by ffmpeg, so Chromium really decodes it) and its captions: reached and opened with the
    keyboard alone, the video carries its captions as a <track>, and the speed choice sets the playback rate."""
    author, reviewer = rangers
    video = tmp_path / "pool.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=15:duration=3",
                    "-pix_fmt", "yuv420p", "-c:v", "libx264", "-movflags", "+faststart", str(video)], check=True)
    tour = author.create_tour("falls", "Tamolitch Pool", frame=FRAME, description="The blue pool.")
    stop = author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": "Blue Pool", "latitude": FIRST_STOP[0], "longitude": FIRST_STOP[1],
                                                                 "description": "The river comes up from under the lava.", "triggerRadiusMeters": RADIUS})
    asset = author.upload(tour["id"], stop["id"], "pool.mp4", video.read_bytes())
    assert author.scanned_asset(asset["id"])["scanStatus"] == "clean"
    captions = author.post_file(f"/manage/assets/{asset['id']}/captions", "pool.vtt",
                                b"WEBVTT\n\n00:00.000 --> 00:03.000\nThe water is ice cold all year.\n")
    wait_for("the captions' scan", lambda: author.get(f"/manage/assets/{captions['id']}").get("scanStatus") == "clean")
    mbtiles = tmp_path / "pool.mbtiles"
    write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{tour['id']}/tiles", "pool.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{tour['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    author.patch(f"/manage/tours/{tour['id']}", {"minZoom": 13, "maxZoom": 16})
    release(author, reviewer, tour["id"])
    package = next(p["id"] for p in json.loads(public(visit_server, "/api/v1/catalog")[0])["packages"] if p["name"] == "Tamolitch Pool")

    panel = visitor
    open_verified(panel, package)
    from selenium.webdriver.common.keys import Keys
    panel.tab_to(lambda element: element.get_attribute("class") == "visit-stop-open")
    panel.press(Keys.ENTER)
    panel.wait(15).until(lambda d: d.find_element("css selector", "[data-stop-order='1'] .visit-stop-open").get_attribute("aria-expanded") == "true")
    panel.wait(30).until(lambda d: d.execute_script("const v = document.querySelector('[data-stop-order=\"1\"] video'); return !!v && v.readyState >= 1"))
    track = panel.find("[data-stop-order='1'] video track")
    assert track.get_attribute("kind") == "captions" and track.get_attribute("srclang") == "en"
    cues = panel.driver.execute_async_script("""
        const done = arguments[0];
        const track = document.querySelector('[data-stop-order="1"] video track');
        track.track.mode = 'hidden';
        const read = () => track.readyState === 2 ? done(Array.from(track.track.cues, (c) => c.text)) : setTimeout(read, 50);
        read();
    """)
    assert cues == ["The water is ice cold all year."]
    speed = panel.find("[data-stop-order='1'] select[aria-label='Playback speed, stop 1']")
    assert [o.get_attribute("value") for o in speed.find_elements("css selector", "option")] == ["0.75", "1", "1.25", "1.5", "2"]
    panel.driver.execute_script("arguments[0].value = '1.5'; arguments[0].dispatchEvent(new Event('change'))", speed)
    assert panel.driver.execute_script("return document.querySelector('[data-stop-order=\"1\"] video').playbackRate") == 1.5
    panel.assert_accessible("player, a video stop with captions", media=False)
