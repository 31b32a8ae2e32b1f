"""The visitor web player against hostile and awkward tours, in Chromium: a stop whose name is markup shows as text in
the stop list and on the map (nothing of it becomes an element); the map numbers its stops as the list does and draws
the route; a stop's audio player has a height on a phone; a catalog past its expiresAt is flagged as stale, and a saved
tour plays on.

The server, the rangers and the release are the ones of test_visitor_player.py; this module runs a server of its own."""
from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.keys import Keys

from support import Panel, chrome, set_viewport, wait_for
from test_visitor_player import (  # noqa: F401  (fixtures, found by name)
    FIRST_STOP, FRAME, RADIUS, SECOND_STOP, open_verified, public, rangers, release, visit_server, visitor, wait_state, wav_bytes,
    write_mbtiles,
)

HOSTILE = '<a id="pwn" href="https://example.org">x</a><meta http-equiv="refresh" content="0;url=/">'
HOSTILE_DESCRIPTION = '<img id="pwn-img" src="/nothing" alt="">Look <b>up</b>.'
THIRD_STOP = (44.3980, -122.0520)
# The page's clock 30 days ahead: the server's catalog (7 days' lifetime) is then past its expiresAt, as a replayed copy is.
CLOCK_AHEAD = """
(() => {
  const shift = 30 * 86400000;
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args) { if (args.length) super(...args); else super(RealDate.now() + shift); }
    static now() { return RealDate.now() + shift; }
  }
  globalThis.Date = ShiftedDate;
})();
"""


@pytest.fixture(scope="module")
def hostile(visit_server, rangers, tmp_path_factory):
    """A tour of three stops, the first named and described with markup and carrying audio, with a route and map tiles."""
    author, reviewer = rangers
    tour = author.create_tour("falls", "Markup Meadow", frame=FRAME, description="Three stops and a route.")
    first = author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": HOSTILE, "latitude": FIRST_STOP[0], "longitude": FIRST_STOP[1],
                                                                  "description": HOSTILE_DESCRIPTION, "triggerRadiusMeters": RADIUS})
    for name, (latitude, longitude) in (("Overlook", SECOND_STOP), ("Bridge", THIRD_STOP)):
        author.post(f"/manage/tours/{tour['id']}/waypoints", {"name": name, "latitude": latitude, "longitude": longitude,
                                                              "description": f"The {name.lower()}.", "triggerRadiusMeters": RADIUS})
    audio = author.upload(tour["id"], first["id"], "meadow.wav", wav_bytes(seconds=2.0))
    assert author.scanned_asset(audio["id"])["scanStatus"] == "clean"
    route = {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"name": "Meadow loop"}, "geometry": {
        "type": "LineString", "coordinates": [[p[1], p[0]] for p in (FIRST_STOP, SECOND_STOP, THIRD_STOP)]}}]}
    assert author.import_file(tour["id"], "route.geojson", json.dumps(route).encode())["applied"]
    mbtiles = tmp_path_factory.mktemp("hostile-tiles") / "meadow.mbtiles"
    write_mbtiles(mbtiles)
    author.post_file(f"/manage/tours/{tour['id']}/tiles", "meadow.mbtiles", mbtiles.read_bytes())
    wait_for("the tiles' scan", lambda: author.get(f"/manage/tours/{tour['id']}/tiles").get("scanStatus") == "clean", timeout=60)
    author.patch(f"/manage/tours/{tour['id']}", {"minZoom": 13, "maxZoom": 16})
    release(author, reviewer, tour["id"])
    catalog = json.loads(public(visit_server, "/api/v1/catalog")[0])
    package = next(p["id"] for p in catalog["packages"] if p["name"] == "Markup Meadow")
    manifest = json.loads(public(visit_server, f"/api/v1/packages/{package}/versions/1/manifest")[0])
    assert len(manifest.get("route") or []) == 3, "the signed manifest carries the route"
    assert [w["name"] for w in sorted(manifest["waypoints"], key=lambda w: w["order"])] == [HOSTILE, "Overlook", "Bridge"]
    return {"package": package}


def no_injected_elements(panel: Panel) -> bool:
    return panel.driver.execute_script(
        "return !document.querySelector('#pwn, #pwn-img, meta[http-equiv], a[href=\"https://example.org\"]')")


def test_names_are_text_in_the_stop_list_and_the_map(visit_server, hostile, visitor):
    panel = visitor
    open_verified(panel, hostile["package"])
    assert panel.text("[data-stop-order='1'] button") == f"1. {HOSTILE}"
    # The map's tooltip of stop 1 (shown when its marker has focus, as on hovering) holds the same literal text.
    marker = panel.find("#visit-map [data-marker-order='1']")
    assert marker.get_attribute("aria-label") == f"Stop 1: {HOSTILE}"
    panel.driver.execute_script("arguments[0].focus()", marker)
    panel.wait(15).until(lambda d: d.find_elements("css selector", "#visit-map .leaflet-tooltip"))
    assert panel.text("#visit-map .leaflet-tooltip") == f"1. {HOSTILE}"
    # The stop's description too, once opened.
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(15).until(lambda d: HOSTILE_DESCRIPTION in d.find_element("css selector", "[data-stop-order='1'] .visit-stop-body").text)
    assert no_injected_elements(panel), "no element of the names' markup exists"
    assert panel.driver.execute_script("return location.pathname") == f"/visit/{hostile['package']}", "no refresh to / happened"
    panel.assert_accessible("player, a stop named with markup", media=False)


def test_the_map_numbers_the_stops_as_the_list_does_and_draws_the_route(visit_server, hostile, visitor):
    panel = visitor
    open_verified(panel, hostile["package"])
    orders = [e.get_attribute("data-stop-order") for e in panel.all("[data-stop]")]
    assert orders == ["1", "2", "3"]
    markers = panel.all("#visit-map .visit-marker")
    assert [m.get_attribute("data-marker-order") for m in markers] == orders
    assert [m.text for m in markers] == orders, "each marker shows its stop's number"
    for marker in markers:
        box = panel.driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", marker)
        assert box[0] > 0 and box[1] > 0
    assert len(panel.all("#visit-map path.visit-route")) == 1, "the signed route is drawn"
    assert len(panel.all("#visit-map path.visit-zone")) == 3
    # A marker is a button for the keyboard too: Enter on stop 3's marker opens stop 3.
    panel.driver.execute_script("arguments[0].focus()", panel.find("#visit-map [data-marker-order='3']"))
    panel.press(Keys.ENTER)
    panel.wait(15).until(lambda d: d.find_element("css selector", "[data-stop-order='3'] .visit-stop-open").get_attribute("aria-expanded") == "true")
    assert "The bridge." in panel.text("[data-stop-order='3']")
    panel.screenshot("visitor-numbered-markers")


@pytest.mark.parametrize("width", [320, 390])
def test_the_stop_audio_has_a_height_on_a_phone(visit_server, hostile, visitor, width):
    panel = visitor
    set_viewport(panel.driver, width, 800, mobile=True)
    open_verified(panel, hostile["package"])
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(30).until(lambda d: d.execute_script(
        "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return !!(a && a.src && a.readyState >= 1)"))
    height, right = panel.driver.execute_script(
        "const r = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]').getBoundingClientRect(); return [r.height, r.right]")
    assert height > 0, "the audio player is drawn with a height"
    assert right <= width
    assert panel.horizontal_overflow() == 0


def test_a_stale_catalog_is_flagged_and_a_saved_tour_plays_on(visit_server, hostile, visitor):
    panel, driver, package = visitor, visitor.driver, hostile["package"]
    open_verified(panel, package)
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    assert not panel.all("[data-notice='stale-catalog']"), "a current catalog is not flagged"

    # The next open, with the phone's clock past the catalog's expiresAt: flagged, not acted on, the saved copy plays.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CLOCK_AHEAD})
    driver.refresh()
    panel.wait(60).until(lambda d: d.find_elements("css selector", "[data-notice='stale-catalog']"))
    notice = panel.find("[data-notice='stale-catalog']")
    assert notice.is_displayed()
    assert "out of date" in notice.text and "Your saved tour still works." in notice.text, notice.text
    assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
    assert panel.find("#player").get_attribute("data-verified") == "true"
    assert not panel.find("[data-action='update']").is_displayed()
    panel.find("[data-stop-order='1'] button").click()
    panel.wait(30).until(lambda d: d.execute_script(
        "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return !!(a && a.src && a.readyState >= 1)"))
    panel.assert_accessible("player, a stale catalog with a saved tour", media=False)


def test_a_stale_catalog_saves_nothing(visit_server, hostile):
    driver = chrome()
    try:
        set_viewport(driver, 390, 844, mobile=True)
        panel = Panel(driver, visit_server)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CLOCK_AHEAD})
        panel.open(f"/visit/{hostile['package']}")
        assert wait_state(panel, "online-only", "failed") == "failed", panel.text("#player")
        notice = panel.find("[data-notice='stale-catalog']")
        assert "The tour was not saved from it." in notice.text and "date and time" in notice.text, notice.text
        assert not panel.find("[data-action='save-offline']").is_enabled()
        assert panel.find("#player").get_attribute("data-verified") == "false"
        panel.assert_accessible("player, a stale catalog and nothing saved", media=False)
    finally:
        driver.quit()
