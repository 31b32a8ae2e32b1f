"""Alerts and closures on a phone, in headless Chromium at phone size: a visitor saves a tour offline; the site's
manager closes stop 2 (a washed-out bridge); the player shows the closure from the signed catalog online and, with the
server gone, from the last catalog it verified, "as of" that check. Walking into stop 2's zone (Chromium's geolocation
override) neither opens nor plays it, a tap says why, and stop 1 still opens and plays. Ended, the alert is gone at
the next check. The message, written with HTML in it, is shown as the text it is.

This module runs its own server (its own data folder and port), since it stops and restarts it."""
from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from support import Api, Panel, Server, chrome, set_viewport, wait_for, write_signatures, png_bytes
from test_visitor_player import FRAME, FIRST_STOP, SECOND_STOP, RADIUS, public, release, start_visit_server, wav_bytes, write_mbtiles

HOSTILE = 'Bridge washed out <img src=x onerror="document.body.dataset.injected=1"><b>use the ford</b>'


@pytest.fixture(scope="module")
def alert_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("alert-data")
    server = Server(data, demo=False, extra_args=("--clamav-db", str(write_signatures(tmp_path_factory.mktemp("alert-clamav")))))
    try:
        yield start_visit_server(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tour(alert_server, tmp_path_factory):
    author = Api(alert_server.base_url, alert_server.create_token("ranger@falls.test"))
    reviewer = Api(alert_server.base_url, alert_server.create_token("reviewer@falls.test"))
    created = author.create_tour("falls", "Koosah Falls Walk", frame=FRAME, description="A short walk to the falls.")
    first = author.post(f"/manage/tours/{created['id']}/waypoints", {"name": "Trailhead", "latitude": FIRST_STOP[0],
                                                                     "longitude": FIRST_STOP[1], "description": "Listen to the river.",
                                                                     "triggerRadiusMeters": RADIUS})
    second = author.post(f"/manage/tours/{created['id']}/waypoints", {"name": "Overlook", "latitude": SECOND_STOP[0],
                                                                      "longitude": SECOND_STOP[1], "description": "The falls below.",
                                                                      "triggerRadiusMeters": RADIUS})
    audio = author.upload(created["id"], first["id"], "river.wav", wav_bytes())
    assert author.scanned_asset(audio["id"])["scanStatus"] == "clean"
    second_audio = author.upload(created["id"], second["id"], "falls.wav", wav_bytes(seconds=3.0))
    assert author.scanned_asset(second_audio["id"])["scanStatus"] == "clean"
    image = author.upload(created["id"], second["id"], "falls.png", png_bytes())
    assert author.scanned_asset(image["id"])["scanStatus"] == "clean"
    mbtiles = tmp_path_factory.mktemp("alert-tiles") / "falls.mbtiles"
    write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{created['id']}/tiles", "falls.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{created['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    author.patch(f"/manage/tours/{created['id']}", {"minZoom": 13, "maxZoom": 16})
    release(author, reviewer, created["id"])
    catalog = json.loads(public(alert_server, "/api/v1/catalog")[0])
    package = next(p for p in catalog["packages"] if p["name"] == "Koosah Falls Walk")["id"]
    return {"id": created["id"], "package": package, "first": first, "second": second, "manager": author}


@pytest.fixture
def visitor(alert_server):
    driver = chrome(arguments=("--autoplay-policy=user-gesture-required",))
    set_viewport(driver, 390, 844, mobile=True)
    try:
        yield Panel(driver, alert_server)
    finally:
        driver.quit()


def wait_state(panel: Panel, *wanted: str, timeout: float = 60) -> str:
    panel.wait(timeout).until(lambda d: d.execute_script("return document.getElementById('player')?.dataset.offlineState") in wanted)
    return panel.find("#player").get_attribute("data-offline-state")


def playing(panel: Panel, order: int) -> bool:
    return panel.driver.execute_script(
        "return [...document.querySelectorAll(`[data-stop-order=\"${arguments[0]}\"] audio`)].some((a) => !a.paused && a.currentTime > 0.2)", order)


def at(panel: Panel, server: Server, point: tuple[float, float]) -> None:
    panel.driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": point[0] + 0.0001, "longitude": point[1], "accuracy": 5})


def test_a_closure_reaches_the_phone_online_and_offline_and_ends(alert_server, tour, visitor):
    panel, driver, manager = visitor, visitor.driver, tour["manager"]

    # Saved for offline use before anything happened on the trail.
    panel.open(f"/visit/{tour['package']}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    assert not panel.all("[data-alert]")
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)

    # The manager closes stop 2, with HTML in the message.
    before = json.loads(public(alert_server, "/api/v1/catalog")[0])["catalogVersion"]
    ends = (datetime.now(timezone.utc) + timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    posted = manager.post("/manage/sites/falls/alerts", {"title": "Overlook bridge closed", "message": HOSTILE, "severity": "closure",
                                                         "tourId": tour["id"], "closedWaypointIds": [tour["second"]["id"]], "endsAt": ends})
    assert json.loads(public(alert_server, "/api/v1/catalog")[0])["catalogVersion"] == before + 1

    # Online: the closure is shown prominently, as text, with when it was checked; stop 2 is closed.
    driver.refresh()
    assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
    panel.wait(30).until(lambda d: d.find_elements("css selector", "[data-alert][data-severity='closure']"))
    shown = panel.find("[data-alert]")
    assert "Overlook bridge closed" in shown.text
    assert HOSTILE in shown.text, "the message is shown as the text it is"
    assert not panel.all("[data-alert] img, [data-alert] b"), "no markup from the message reaches the page"
    assert driver.execute_script("return document.body.dataset.injected") is None
    assert "As of" in shown.text
    assert panel.find("[data-stop-order='2']").get_attribute("data-closed") == "true"
    assert panel.find("[data-stop-order='1']").get_attribute("data-closed") is None
    # The map draws stop 2 as closed too: grey, and named closed; stop 1 stays open.
    closed_marker = panel.find("[data-marker-order='2']")
    assert closed_marker.get_attribute("data-closed") == "true"
    assert closed_marker.get_attribute("aria-label").endswith("(closed)")
    assert closed_marker.value_of_css_property("background-color") != panel.find("[data-marker-order='1']").value_of_css_property("background-color")
    assert panel.find("[data-marker-order='1']").get_attribute("data-closed") is None
    # Prominent: above the stops and the map, visible without scrolling at phone size.
    assert driver.execute_script("const r = document.querySelector('[data-alert]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight")
    assert panel.horizontal_overflow() == 0
    panel.assert_accessible("player with a closure", media=False)
    panel.screenshot("visitor-closure")

    # Offline (the server is gone): the last verified catalog still says so, with the same "as of".
    as_of = panel.find("[data-alert] [data-as-of]").get_attribute("data-as-of")
    alert_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        panel.wait(30).until(lambda d: d.find_elements("css selector", "[data-alert][data-severity='closure']"))
        assert panel.find("[data-alert] [data-as-of]").get_attribute("data-as-of") == as_of
        assert panel.find("[data-stop-order='2']").get_attribute("data-closed") == "true"

        # Walking into stop 2's zone: it neither opens nor plays, and the page says why.
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": alert_server.base_url, "permissions": ["geolocation"]})
        at(panel, alert_server, SECOND_STOP)
        panel.find("[data-action='start']").click()
        panel.wait(30).until(lambda d: "is closed" in d.find_element("css selector", "#location-status").text)
        assert not panel.all("[data-stop-order='2'][data-active]")
        assert not panel.find("[data-stop-order='2'] .visit-stop-body").is_displayed()
        assert not panel.all("[data-stop-order='2'] audio")
        assert not playing(panel, 2)
        # A tap on it says why, and still plays nothing.
        panel.find("[data-stop-order='2'] .visit-stop-open").click()
        panel.wait(10).until(lambda d: d.find_element("css selector", "[data-stop-order='2'] .visit-stop-closed-why").is_displayed())
        stop_text = panel.text("[data-stop-order='2']")
        assert "Closed: Overlook bridge closed" in stop_text and HOSTILE in stop_text, stop_text
        assert stop_text.count("Overlook bridge closed") == 1, f"the closure's title is said once: {stop_text!r}"
        assert not panel.all("[data-stop-order='2'] audio, [data-stop-order='2'] img")

        # Stop 1's zone: it opens and its audio plays.
        at(panel, alert_server, FIRST_STOP)
        panel.wait(30).until(lambda d: d.find_elements("css selector", "[data-stop-order='1'][data-active]"))
        panel.wait(30).until(lambda d: playing(panel, 1))
        assert not playing(panel, 2)
    finally:
        alert_server.start()

    # Ended by the manager: gone at the next check online, and stop 2 open again.
    manager.delete(f"/manage/alerts/{posted['id']}")
    driver.execute_cdp_cmd("Emulation.clearGeolocationOverride", {})
    driver.refresh()
    assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
    panel.wait(30).until(lambda d: d.execute_script(
        "return localStorage.getItem('trail.lastCatalog')?.includes('Overlook bridge closed') === false"
        " && !document.querySelector('[data-alert]')"))
    assert panel.find("[data-stop-order='2']").get_attribute("data-closed") is None
    assert panel.find("[data-marker-order='2']").get_attribute("data-closed") is None, "the marker is open again"


def test_the_alerts_form_speaks_the_sites_time_and_offers_only_the_chosen_tours_stops(alert_server, tour):
    """A district's alerts page: times read and shown in the site's time zone (here Denver), and the closed-stops
    choice narrowed to the chosen tour, so a manager is not handed every stop of every tour."""
    from test_visitor_player import PASSWORD
    manager = tour["manager"]
    manager.patch("/manage/sites/falls", {"timeZone": "America/Denver"})
    other = manager.create_tour("falls", "Other Loop", frame=FRAME)
    other_stop = manager.add_waypoint(other["id"], "Elsewhere", FIRST_STOP[0], FIRST_STOP[1])
    driver = chrome()
    try:
        panel = Panel(driver, alert_server)
        panel.sign_in("ranger@falls.test", PASSWORD)
        panel.open("/sites/falls/alerts")
        assert "America/Denver time" in panel.text("label[for='alert-ends']")
        own, foreign = f"#alert-stop-{tour['second']['id']}", f"#alert-stop-{other_stop['id']}"
        # No tour chosen: no stops to tick, and a word on how to get them.
        assert not panel.find(own).is_displayed() and not panel.find(foreign).is_displayed()
        assert panel.find("#alert-stops-none").is_displayed()
        panel.find(f"#alert-tour option[value='{tour['id']}']").click()
        panel.wait().until(lambda d: panel.find(own).is_displayed())
        assert not panel.find(foreign).is_displayed(), "another tour's stop is not offered"
        panel.find(own).click()
        ends = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%d")
        panel.fill(panel.find("#alert-title"), "Overlook trail icy")
        panel.fill(panel.find("#alert-message"), "Use the lower path.")
        # The ends field is a datetime-local input; its value is what the browser sends, without a zone.
        panel.driver.execute_script("arguments[0].value = arguments[1]", panel.find("#alert-ends"), f"{ends}T18:00")
        panel.submit(panel.find("form[data-alert-form] button[type=submit]"))
        row = panel.find("[data-alert-row]")
        # 18:00 as typed, with Denver's zone (its abbreviation as the system names it: MST, or GMT-7).
        assert re.search(rf"until {ends} 18:00 (MST|MDT|GMT-7|GMT-6)\b", row.text), row.text
        assert "Overlook" in row.text
        panel.assert_accessible("alerts page in the site's time zone", media=False)
        stored = manager.get("/manage/sites/falls/alerts")
        posted = next(a for a in stored if a["title"] == "Overlook trail icy")
        assert posted["closedWaypointIds"] == [tour["second"]["id"]]
        # 18:00 in Denver is 01:00 the next day in UTC (00:00 in summer time).
        assert posted["endsAt"].endswith(("T01:00:00Z", "T00:00:00Z")), posted["endsAt"]
        manager.delete(f"/manage/alerts/{posted['id']}")
    finally:
        driver.quit()
