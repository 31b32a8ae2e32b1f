"""Visitor statistics without tracking, in Chromium: the player counts what a visitor does (a tour opened, saved, a
stop opened and played) with the sign it came from (`?src=`), queues the counts in IndexedDB while the phone is
offline and sends them once it is back online; it sets no cookie and stores no identifier; with Global Privacy
Control on it sends nothing. The panel's statistics page shows the stored figures as totals, charts and tables,
asks no other host for anything, and passes axe.

This module runs its own server (its own data folder and port), so the counts it checks are its own visits alone."""
from __future__ import annotations

import json
import time
import urllib.request
from urllib.parse import urlparse

import pytest

from support import Api, Panel, Server, Store, chrome, console_errors, set_viewport, wait_for, write_signatures
from test_visitor_player import FIRST_STOP, FRAME, PASSWORD, SECOND_STOP, RADIUS, release, start_visit_server, wav_bytes, write_mbtiles

SIGN = "trailhead-north"


@pytest.fixture(scope="module")
def stats_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("stats-data")
    server = Server(data, demo=False, extra_args=("--clamav-db", str(write_signatures(tmp_path_factory.mktemp("stats-clamav")))))
    try:
        yield start_visit_server(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tour(stats_server, tmp_path_factory):
    """A published two-stop tour (audio at the first stop), released by the falls site's manager."""
    author = Api(stats_server.base_url, stats_server.create_token("ranger@falls.test"))
    reviewer = Api(stats_server.base_url, stats_server.create_token("reviewer@falls.test"))
    created = author.create_tour("falls", "Sahalie Falls Loop", frame=FRAME, description="Counted, not tracked.")
    stops = [
        author.post(f"/manage/tours/{created['id']}/waypoints", {"name": name, "latitude": lat, "longitude": lon,
                                                                 "description": "A stop.", "triggerRadiusMeters": RADIUS})
        for name, (lat, lon) in (("Trailhead", FIRST_STOP), ("Overlook", SECOND_STOP))
    ]
    audio = author.upload(created["id"], stops[0]["id"], "river.wav", wav_bytes(2.0))
    assert author.scanned_asset(audio["id"])["scanStatus"] == "clean"
    mbtiles = tmp_path_factory.mktemp("stats-tiles") / "falls.mbtiles"
    write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{created['id']}/tiles", "falls.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{created['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    author.patch(f"/manage/tours/{created['id']}", {"minZoom": 13, "maxZoom": 16})
    release(author, reviewer, created["id"])
    with urllib.request.urlopen(f"{stats_server.base_url}/api/v1/catalog", timeout=30) as response:
        catalog = json.loads(response.read())
    package = next(p["id"] for p in catalog["packages"] if p["name"] == "Sahalie Falls Loop")
    return {"id": created["id"], "package": package, "manager": author}


def counts(server: Server) -> dict[str, int]:
    """The stored counts by kind, read from the database file as an operator would."""
    rows = Store(server.data / "trail.sqlite").rows("SELECT kind, SUM(count) AS n FROM visitCount GROUP BY kind")
    return {row["kind"]: row["n"] for row in rows}


def sources(server: Server) -> dict[str, int]:
    rows = Store(server.data / "trail.sqlite").rows("SELECT source, SUM(count) AS n FROM visitCount WHERE kind = 'opened' GROUP BY source")
    return {row["source"]: row["n"] for row in rows}


def queued(panel: Panel) -> int:
    """Events waiting in the player's IndexedDB queue (0 when it has none)."""
    return panel.driver.execute_async_script("""
        const done = arguments[0];
        const request = indexedDB.open('trail-events');
        request.onerror = () => done(-1);
        request.onsuccess = () => {
          const db = request.result;
          if (!db.objectStoreNames.contains('events')) { db.close(); done(0); return; }
          const count = db.transaction('events').objectStore('events').count();
          count.onsuccess = () => { db.close(); done(count.result); };
        };
    """)


def storage_names(panel: Panel) -> dict:
    """What the page keeps in the browser: cookies, localStorage keys, IndexedDB databases."""
    return panel.driver.execute_async_script("""
        const done = arguments[0];
        indexedDB.databases().then((dbs) => done({
          cookie: document.cookie, local: Object.keys(localStorage).sort(), session: Object.keys(sessionStorage),
          databases: dbs.map((d) => d.name).sort(),
        }));
    """)


def other_hosts(panel: Panel) -> list[str]:
    """Every resource the page loaded from a host other than the server."""
    origin = urlparse(panel.server.base_url).netloc
    names = panel.driver.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    return [name for name in names if urlparse(name).netloc not in ("", origin)]


def state(panel: Panel, *wanted: str, timeout: float = 120) -> str:
    panel.wait(timeout).until(lambda d: d.execute_script("return document.getElementById('player')?.dataset.offlineState") in wanted)
    return panel.find("#player").get_attribute("data-offline-state")


@pytest.fixture
def visitor(stats_server):
    driver = chrome(arguments=("--autoplay-policy=no-user-gesture-required",))
    set_viewport(driver, 390, 844, mobile=True)
    try:
        yield Panel(driver, stats_server)
    finally:
        driver.quit()


def test_offline_events_wait_in_the_queue_and_are_sent_back_online_without_cookie_or_identifier(stats_server, tour, visitor):
    panel, driver = visitor, visitor.driver
    before = counts(stats_server)
    driver.execute_script("performance.setResourceTimingBufferSize(100000)")
    panel.open(f"/visit/{tour['package']}?src={SIGN}")
    assert state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    wait_for("the opened event to be counted", lambda: counts(stats_server).get("opened", 0) == before.get("opened", 0) + 1, timeout=30)
    assert sources(stats_server).get(SIGN) == 1, "the sign of the QR link is the event's source"

    panel.find("[data-action='save-offline']").click()
    assert state(panel, "ready", "failed") == "ready", panel.text("#offline-error")
    wait_for("the saved-offline event", lambda: counts(stats_server).get("saved-offline", 0) == before.get("saved-offline", 0) + 1, timeout=30)
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)

    # Offline on the trail: the visitor opens both stops and plays the first one's audio. Nothing reaches the server;
    # the events wait in IndexedDB.
    panel.network(offline=True)
    try:
        wait_for("the page to know it is offline", lambda: driver.execute_script("return navigator.onLine") is False, timeout=10)
        offline_before = counts(stats_server)
        panel.find("[data-stop-order='1'] .visit-stop-open").click()
        panel.wait(30).until(lambda d: d.execute_script(
            "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return a && a.currentTime > 0"))
        panel.find("[data-stop-order='2'] .visit-stop-open").click()
        # stop-opened ×2, stop-played, completed (both stops opened).
        wait_for("four events in the queue", lambda: queued(panel) == 4, timeout=30)
        time.sleep(1)
        assert counts(stats_server) == offline_before, "nothing is sent while offline"
    finally:
        panel.network()

    # Back online: the queue is sent and emptied, and the server holds exactly what the visitor did.
    wait_for("the queue to empty", lambda: queued(panel) == 0, timeout=30)
    after = counts(stats_server)
    for kind, added in (("stop-opened", 2), ("stop-played", 1), ("completed", 1)):
        assert after.get(kind, 0) == before.get(kind, 0) + added, (kind, before, after)
    assert after.get("opened") == before.get("opened", 0) + 1

    # No cookie, no identifier: the cookie jar is empty, localStorage holds only the trust and saved-tour keys
    # (the signing key, catalog version, last catalog, the saved version), and IndexedDB only the (empty) queue.
    assert driver.get_cookies() == []
    kept = storage_names(panel)
    assert kept["cookie"] == ""
    assert kept["session"] == []
    assert set(kept["local"]) <= {"trail.signingKey", "trail.catalogVersion", "trail.lastCatalog", f"trail.tour.{tour['package']}"}, kept
    assert kept["databases"] == ["trail-events"], kept
    assert other_hosts(panel) == []
    assert not console_errors(driver) or all("ERR_INTERNET_DISCONNECTED" in line for line in console_errors(driver))


def test_global_privacy_control_sends_nothing(stats_server, tour, visitor):
    panel, driver = visitor, visitor.driver
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
        "source": "Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', {get: () => true, configurable: true});"})
    before = counts(stats_server)
    driver.execute_script("performance.setResourceTimingBufferSize(100000)")
    panel.open(f"/visit/{tour['package']}?src={SIGN}")
    assert state(panel, "online-only", "failed") == "online-only"
    assert driver.execute_script("return navigator.globalPrivacyControl") is True
    panel.find("[data-stop-order='1'] .visit-stop-open").click()
    panel.find("[data-stop-order='2'] .visit-stop-open").click()
    time.sleep(2)
    sent = driver.execute_script("return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/api/v1/events'))")
    assert sent == [], "no event is sent with Global Privacy Control on"
    assert counts(stats_server) == before
    assert storage_names(panel)["databases"] == [], "no queue is even made"
    assert driver.get_cookies() == []


def test_the_statistics_page_shows_totals_charts_and_tables_from_this_server_alone(stats_server, tour):
    driver = chrome()
    try:
        panel = Panel(driver, stats_server)
        panel.sign_in("ranger@falls.test", PASSWORD)
        driver.execute_script("performance.setResourceTimingBufferSize(100000)")
        panel.open("/sites/falls")
        panel.find("a[href='/sites/falls/stats']").click()
        panel.wait_ready()
        assert panel.path().startswith("/sites/falls/stats")
        stored = counts(stats_server)
        assert stored.get("opened", 0) >= 1, "the visitor tests above counted visits"
        for stat, kind in (("opened", "opened"), ("saved-offline", "saved-offline"), ("completed", "completed")):
            shown = panel.find(f"[data-stat='{stat}']")
            assert int(shown.get_attribute("data-count")) == stored.get(kind, 0), stat
            assert shown.text == str(stored.get(kind, 0))
        # The player's save reported its verified download: the server counted it as a complete download of that day.
        downloads = Store(stats_server.data / "trail.sqlite").rows("SELECT COALESCE(SUM(count), 0) AS n FROM downloadCount")[0]["n"]
        assert downloads >= 1
        assert panel.find("[data-stat='downloads']").get_attribute("data-count") == str(downloads)
        # Every table has its chart, drawn by Chart.js from /vendor/chart.js.
        tables = panel.all("table[data-chart]")
        assert len(tables) >= 7
        panel.wait(10).until(lambda d: len(d.find_elements("css selector", "[data-chart-for] canvas")) == len(tables))
        for table in tables:
            assert panel.find(f"[data-chart-for='{table.get_attribute('id')}'] canvas").get_attribute("aria-label")
        sign_row = [row.text for row in panel.all("#chart-sources tbody tr")]
        assert any(row.startswith(SIGN) for row in sign_row), sign_row
        stops = [row.text for row in panel.all("#chart-stops tbody tr")]
        assert any(row.startswith("1. Trailhead") for row in stops), stops
        scripts = driver.execute_script("return [...document.scripts].map((s) => s.src).filter(Boolean)")
        assert any(src.endswith("/vendor/chart.js/chart.min.js") for src in scripts)
        assert other_hosts(panel) == [], "the page asks no other host for anything"
        assert not console_errors(driver)
        panel.assert_accessible("visitor statistics")
        for width in (375, 1440):
            set_viewport(driver, width, 900, mobile=width < 500)
            assert panel.horizontal_overflow() == 0, f"sideways scrolling at {width} px"
        # The CSV export the page links: small counts as <10.
        href = panel.find("[data-export='csv']").get_attribute("href")
        csv = driver.execute_async_script("fetch(arguments[0]).then((r) => r.text()).then(arguments[1])", href)
        lines = csv.strip().split("\r\n")
        assert lines[0] == "day,tour,packageId,version,measure,stop,language,source,count"
        assert all(line.rsplit(",", 1)[1] == "<10" or int(line.rsplit(",", 1)[1]) >= 10 for line in lines[1:])
        assert any(f",{SIGN},<10" in line for line in lines[1:]), lines
    finally:
        driver.quit()
