"""Offline map tiles in the panel: the frame editor's live tile count while a corner is dragged, the admin's
"Map tiles" settings refusing a public OpenStreetMap server, and the phone preview of a built publish request.

The suite's server has no tile server (no `--tile-url`): the tour page still counts the tiles a frame needs, and
packages carry no tiles. Each step checks what the page shows and what the server stored."""
import json
import re

import mercantile
import pytest
from selenium.webdriver.common.by import By

from test_review_flow import submit_for_review, wait_state

SANTIAM = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
ESTIMATE = re.compile(r"([\d,]+) tiles at zoom (\d+)–(\d+), about ([\d.]+ (?:bytes|KiB|MiB|GiB|TiB))")


def tile_count(frame: dict, min_zoom: int, max_zoom: int) -> int:
    """What the frame needs, by Python's mercantile (the server's `TileMath` and the page's script follow it)."""
    return sum(1 for _ in mercantile.tiles(frame["west"], frame["south"], frame["east"], frame["north"], range(min_zoom, max_zoom + 1)))


def shown_estimate(panel) -> tuple[int, int, int, str]:
    """(tiles, smallest zoom, largest zoom, size) as the frame editor shows them now."""
    text = panel.text("#tile-estimate-text")
    match = ESTIMATE.fullmatch(text)
    assert match, f"the estimate reads {text!r}"
    return int(match.group(1).replace(",", "")), int(match.group(2)), int(match.group(3)), match.group(4)


def served_estimate(panel) -> str:
    """The estimate in the page as the server wrote it (before the script updates it), fetched by the browser."""
    return panel.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch(location.pathname, {credentials: 'same-origin'}).then((r) => r.text()).then((html) => {
            done(new DOMParser().parseFromString(html, 'text/html').getElementById('tile-estimate-text')?.textContent ?? null);
        }, (error) => done('failed: ' + error));
    """)


def test_the_frame_editor_counts_tiles_live_while_a_corner_is_dragged(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Hand Lake Shelter", frame=SANTIAM)
    tour_id = tour["id"]
    stored = store.tour(tour_id)
    zooms = (stored["minZoom"], stored["maxZoom"])
    panel.open(f"/tours/{tour_id}")

    # No tile server: the card says so, and the count is shown all the same, without the cap's warning.
    assert "No tile server is set up" in panel.text("#tile-source")
    assert panel.find("#tile-estimate").get_attribute("data-server") == "false"
    count, low, high, size = shown_estimate(panel)
    assert (low, high) == zooms == (int(panel.find("#minZoom").get_attribute("value")), int(panel.find("#maxZoom").get_attribute("value")))
    assert count == tile_count(SANTIAM, *zooms) > 0
    assert served_estimate(panel) == panel.text("#tile-estimate-text"), "the script counts as the server does"
    assert not panel.find("#tile-estimate-warning").is_displayed()

    # Drag the south-east corner up and left: the frame shrinks, and so does the count, at once.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.wait_map_idle()
    panel.drag(panel.find(".frame-handle-se"), -150, -60)
    panel.wait().until(lambda d: shown_estimate(panel)[0] != count)
    moved = panel.frame_inputs()
    assert moved["east"] < SANTIAM["east"] and moved["south"] > SANTIAM["south"]
    smaller, low, high, smaller_size = shown_estimate(panel)
    assert (low, high) == zooms
    assert smaller == tile_count(moved, *zooms) < count
    assert smaller_size != size
    assert store.tour(tour_id)["frameEast"] == SANTIAM["east"], "nothing is stored before saving"

    # The largest zoom counts too: one level fewer, far fewer tiles.
    panel.fill(panel.find("#maxZoom"), str(zooms[1] - 1))
    panel.wait().until(lambda d: shown_estimate(panel)[2] == zooms[1] - 1)
    assert shown_estimate(panel)[0] == tile_count(moved, zooms[0], zooms[1] - 1) < smaller
    panel.assert_accessible("tour page, tile count after dragging a corner")

    # Save: the server keeps the frame and the zoom, and its own count agrees with the page's.
    panel.submit(panel.find("#frame-form button[type=submit]"))
    assert panel.notice() == "Frame saved."
    saved = store.tour(tour_id)
    frame = {k: saved["frame" + k.capitalize()] for k in ("north", "south", "east", "west")}
    assert frame == pytest.approx(moved, abs=1e-6) and saved["maxZoom"] == zooms[1] - 1
    assert api.tour(tour_id)["frame"] == frame
    assert shown_estimate(panel)[0] == tile_count(frame, zooms[0], zooms[1] - 1)
    assert served_estimate(panel) == panel.text("#tile-estimate-text")


OSM = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"


def test_the_admin_tile_settings_refuse_openstreetmap(admin_panel, store):
    panel = admin_panel
    panel.submit(panel.find("nav a[href='/admin/tiles']"))
    assert panel.path() == "/admin/tiles"
    assert panel.heading() == "Map tiles"
    assert "Nothing saved here yet: the server's command-line settings apply" in panel.text("main")
    assert panel.find("#urlTemplate").get_attribute("value") == ""
    assert "openstreetmap.org, osm.org" in panel.text("#urlTemplate-help")
    panel.assert_accessible("admin: map tiles")

    panel.submit_form("#tile-settings-form", urlTemplate=OSM, attribution="© OpenStreetMap contributors", tileCap="5000")
    assert panel.path() == "/admin/tiles"
    field = panel.find("#urlTemplate")
    assert "is-invalid" in field.get_attribute("class").split()
    feedback = field.find_element(By.XPATH, "following-sibling::div[contains(@class, 'invalid-feedback')][1]")
    assert feedback.is_displayed()
    assert feedback.text.startswith("The public OpenStreetMap tile servers forbid bulk downloads for offline use."), feedback.text
    assert len(panel.all("#tile-settings-form .invalid-feedback")) == 1, "only the template is at fault"
    assert not panel.all("main .alert-success")
    # What was typed stays in the form, to be corrected.
    assert (field.get_attribute("value"), panel.find("#attribution").get_attribute("value"), panel.find("#tileCap").get_attribute("value")) == \
        (OSM, "© OpenStreetMap contributors", "5000")
    panel.assert_accessible("admin: map tiles, OpenStreetMap refused")

    # Nothing stored: no settings row, no audit event; the tour pages still have no tile server.
    assert store.rows("SELECT * FROM tileSettings") == []
    assert store.audit("tiles.settings") == []


ROUTE = {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {},
         "geometry": {"type": "LineString", "coordinates": [[-122.14, 44.395], [-122.12, 44.40], [-122.09, 44.405]]}}]}


def test_the_phone_preview_of_a_publish_request(admin_panel, admin, e2e_site, api, store):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Lost Lake Butte", frame=SANTIAM, description="A cinder cone above the lake.")
    api.add_waypoint(tour["id"], "Lost Lake Trailhead", 44.395, -122.14, "Park by the lake.")
    api.add_waypoint(tour["id"], "Butte Summit", 44.405, -122.09, "Mount Washington to the south.")
    imported = api.import_file(tour["id"], "butte-route.geojson", json.dumps(ROUTE).encode())
    assert imported["applied"] and imported["plan"]["routePoints"] == 3

    # A request, built (no files, no tiles: seconds), from the tour page's "Submit for review".
    request_id = submit_for_review(panel, tour["id"])
    try:
        wait_state(panel, "Waiting for review")
        stored = store.publish_request(request_id)
        assert stored["state"] == "pending"
        manifest = json.loads(stored["manifestJSON"])
        assert [w["name"] for w in manifest["waypoints"]] == ["Lost Lake Trailhead", "Butte Summit"]
        assert manifest.get("tiles") is None, "no tile server, no uploaded MBTiles: no tiles"

        # The request page links to the phone preview.
        link = panel.find("#phone-preview-link")
        assert link.text == "Phone preview"
        panel.submit(link)
        assert panel.path() == f"/requests/{request_id}/preview"
        assert panel.heading() == "Lost Lake Butte"
        assert panel.text("main p.text-muted") == "E2E Test Park · Version 1, waiting for review"
        assert panel.find("nav[aria-label=breadcrumb] a").get_attribute("href").endswith(f"/requests/{request_id}")

        # The phone's map: Leaflet on the package's frame, its two numbered waypoints and the route, no tiles.
        preview = panel.visible("#preview-map")
        panel.wait().until(lambda d: "leaflet-container" in preview.get_attribute("class").split())
        assert preview.size["width"] > 200 and preview.size["height"] > 200
        assert preview.get_attribute("aria-label") == "Offline map of the package"
        markers = panel.all("#preview-map .waypoint-marker")
        assert [(m.get_attribute("title"), m.text) for m in markers] == [("Lost Lake Trailhead", "1"), ("Butte Summit", "2")]
        assert len([p for p in panel.all("#preview-map path[stroke='#b5441d']") if p.get_attribute("d")]) == 1, "the route is drawn"
        assert not panel.all("#preview-map .leaflet-tile"), "a package without tiles fetches none"
        assert panel.text("#preview-tiles") == "This package has no map tiles: the app shows the waypoints on a blank background."
        assert [li.text for li in panel.all(".phone-list li")] == ["1 Lost Lake Trailhead", "2 Butte Summit"]
        assert manifest["route"] == ROUTE["features"][0]["geometry"]["coordinates"], "the package carries the route as imported"
        panel.assert_accessible("phone preview of a request")
    finally:
        # Withdraw it, so that no request stays open in the suite's site (it would show in the managers' badge).
        if (store.publish_request(request_id) or {}).get("state") in ("building", "pending", "ready"):
            api.post(f"/manage/publish-requests/{request_id}/withdraw", {})
    assert store.publish_request(request_id)["state"] == "withdrawn"
    assert store.tour(tour["id"])["state"] == "draft"
