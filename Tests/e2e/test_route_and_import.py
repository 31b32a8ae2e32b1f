"""Routes and imports on the tour page: draw the route by clicking the map and save it; import waypoints from a
GeoJSON file through the panel's preview, then apply it; a malformed file is refused.

Each step checks what the page shows and what the server stored (SQLite, read-only, and the management API)."""
import json
import re

import pytest
from selenium.webdriver.common.by import By

from support import MapScale, route_length_meters

SANTIAM = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
NO_ROUTE = "none — distances are straight lines between waypoints"


def handle_centers(panel):
    return panel.center(panel.find(".frame-handle-nw")), panel.center(panel.find(".frame-handle-se"))


def scale_of_frame(panel) -> MapScale:
    """Pixel ↔ degree scale of the current map view, measured on the frame rectangle's corner handles."""
    nw, se = handle_centers(panel)
    f = panel.frame_inputs()
    return MapScale.between(nw, se, f["north"], f["west"], f["south"], f["east"])


def route_lines(panel) -> list[str]:
    """The `d` of every route line Leaflet drew on the tour map (its colour is the route's)."""
    return [p.get_attribute("d") for p in panel.all("#tour-map path[stroke='#b5441d']") if p.get_attribute("d") not in (None, "", "M0 0")]


def test_draw_the_route_by_clicking_the_map_and_save_it(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "McKenzie Pass Trail", frame=SANTIAM)
    tour_id = tour["id"]
    panel.open(f"/tours/{tour_id}")
    assert panel.text("#route-summary") == NO_ROUTE
    assert store.tour(tour_id)["route"] is None
    assert not route_lines(panel)

    # "Draw the route on the map": the button turns into "Stop drawing" and "Save route" appears.
    draw = panel.visible("#route-edit")
    assert draw.text == "Draw the route on the map"
    assert not panel.find("#route-save").is_displayed()
    panel.driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", draw)
    draw.click()
    assert draw.text == "Stop drawing" and draw.get_attribute("aria-pressed") == "true"
    assert panel.visible("#route-save").text == "Save route"

    # Three clicks inside the frame, each adding a route point (a handle) where the mouse was.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.wait_map_idle()
    scale = scale_of_frame(panel)
    lat_tol, lng_tol = scale.tolerance(1.5)
    (nw_x, nw_y), (se_x, se_y) = handle_centers(panel)
    expected = []
    for number, (fx, fy) in enumerate([(0.2, 0.75), (0.5, 0.3), (0.8, 0.6)], start=1):
        x, y = nw_x + fx * (se_x - nw_x), nw_y + fy * (se_y - nw_y)
        panel.click_map_at(x, y)
        panel.wait().until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#tour-map .route-handle")) == number)
        handle = panel.find(f"#tour-map .route-handle[title='Route point {number}']")
        hx, hy = panel.center(handle)
        assert (hx, hy) == (pytest.approx(x, abs=1), pytest.approx(y, abs=1)), "the route point sits where the map was clicked"
        expected.append(scale.to_latlng(x, y))
    assert not panel.all("#tour-map .leaflet-popup"), "clicks while drawing add route points, not waypoints"
    assert panel.find("#wp-latitude").get_attribute("value") == ""
    assert len(route_lines(panel)) == 1, "the line is drawn while drawing"
    assert store.tour(tour_id)["route"] is None, "nothing is stored before saving"

    # Save: the summary follows without a reload, and the server stores the three points.
    panel.driver.execute_script("window.__e2eSamePage = true")
    save = panel.find("#route-save")
    panel.driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", save)
    save.click()
    panel.wait().until(lambda d: panel.find("#route-summary").text != NO_ROUTE)
    stored = json.loads(panel.wait().until(lambda d: store.tour(tour_id)["route"]))
    assert len(stored) == 3
    for (longitude, latitude), (want_lat, want_lng) in zip(stored, expected):
        assert latitude == pytest.approx(want_lat, abs=lat_tol) and longitude == pytest.approx(want_lng, abs=lng_tol)
    length = route_length_meters(stored)
    assert 1000 < length < 30000, length
    summary = panel.find("#route-summary").text
    assert re.fullmatch(r"3 points, \d+\.\d\d km \(reload for the new estimate\)", summary), summary
    assert float(summary.split()[2]) == pytest.approx(length / 1000, abs=0.0051)
    assert panel.driver.execute_script("return window.__e2eSamePage === true"), "saving the route does not reload the page"
    assert [e["action"] for e in store.audit("tour.route", "tour") if e["objectId"] == str(tour_id)] == ["tour.route"]
    # The management API's export carries the same line (longitude first).
    exported = api.export(tour_id)
    [line] = [f for f in exported["features"] if f["geometry"]["type"] == "LineString"]
    assert line["geometry"]["coordinates"] == stored
    panel.assert_accessible("tour page, route drawn and saved")

    # Reloaded: the summary and the duration come from the stored route, and the map draws it.
    panel.open(f"/tours/{tour_id}")
    assert panel.text("#route-summary") == f"3 points, {length / 1000:.2f} km"
    # No waypoints yet: the walk is the route at the default 4 km/h.
    assert f": {length / 1000:.1f} km walking ({length / 4000 * 60:.0f} min)" in panel.text("#duration-estimate"), panel.text("#duration-estimate")
    assert len(route_lines(panel)) == 1
    assert not panel.all("#tour-map .route-handle"), "the route points show only while drawing"
    assert panel.find("#route-edit").text == "Draw the route on the map"
    panel.assert_accessible("tour page with a route")


GEOJSON_POINTS = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-122.06, 44.41]},
         "properties": {"name": "Great Spring", "description": "The river starts here, cold and clear."}},
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-122.08, 44.38]},
         "properties": {"name": "Coldwater Cove", "description": "Drowned forest under the lake."}},
    ],
}


def choose_and_preview(panel, path) -> None:
    """Chooses a file in the tour page's import form and presses "Preview import"."""
    field = panel.find("#import-file")
    panel.driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", field)
    field.send_keys(str(path))
    panel.submit(panel.find("#import-form button[type=submit]"))


def test_import_geojson_waypoints_through_the_preview(admin_panel, e2e_site, api, store, tmp_path):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Clear Lake Loop", frame=SANTIAM)
    tour_id = tour["id"]
    geojson = tmp_path / "clear-lake.geojson"
    geojson.write_text(json.dumps(GEOJSON_POINTS))

    panel.open(f"/tours/{tour_id}")
    assert "No waypoints yet." in panel.text("main")
    assert panel.find("label[for='import-file']").text == "Import waypoints or a track (GeoJSON, GPX, KML, KMZ, CSV)"
    choose_and_preview(panel, geojson)

    # The preview: what will be added, nothing saved yet.
    # Post/redirect/get: the preview has its own address, without the form's CSRF token.
    assert re.fullmatch(rf"/tours/{tour_id}/import/import-[0-9a-f-]+", panel.path()), panel.path()
    assert panel.heading() == "Import preview"
    assert "Nothing has been saved yet. 2 waypoints will be added, 0 changed, 0 skipped." in panel.text("main")
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in panel.all("#import-plan tbody tr")]
    assert rows == [["add", "Great Spring", "44.41", "-122.06", ""], ["add", "Coldwater Cove", "44.38", "-122.08", ""]], rows
    assert store.waypoints(tour_id) == []
    assert not [e for e in store.audit("tour.import", "tour") if e["objectId"] == str(tour_id)]
    panel.assert_accessible("import preview")

    # Apply: back on the tour page with both waypoints, in the file's order.
    panel.submit(panel.find("form[action$='/apply'] button[type=submit]"))
    assert panel.path() == f"/tours/{tour_id}"
    assert panel.notice() == "Imported: 2 added, 0 changed, 0 skipped."
    assert panel.waypoint_rows() == [("Great Spring", "44.410000, -122.060000"), ("Coldwater Cove", "44.380000, -122.080000")]
    assert len(panel.all("#tour-map .waypoint-marker")) == 2
    stored = store.waypoints(tour_id)
    assert [(w["name"], w["position"], w["latitude"], w["longitude"], w["description"]) for w in stored] == [
        ("Great Spring", 1, 44.41, -122.06, "The river starts here, cold and clear."),
        ("Coldwater Cove", 2, 44.38, -122.08, "Drowned forest under the lake."),
    ]
    assert [w["name"] for w in api.tour(tour_id)["waypoints"]] == ["Great Spring", "Coldwater Cove"]
    assert [e["action"] for e in store.audit("tour.import", "tour") if e["objectId"] == str(tour_id)] == ["tour.import"]
    panel.assert_accessible("tour page after an import")

    # The same file again changes nothing: the preview says both are already there and offers no "Apply".
    choose_and_preview(panel, geojson)
    assert "0 waypoints will be added, 0 changed, 2 skipped." in panel.text("main")
    assert [tr.find_elements(By.TAG_NAME, "td")[4].text for tr in panel.all("#import-plan tbody tr")] == ["already in the tour, unchanged"] * 2
    assert not panel.all("form[action$='/apply']")


def test_import_a_spreadsheet_and_fit_the_frame_to_its_points(admin_panel, e2e_site, api, store, tmp_path):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Sahalie Falls", frame=SANTIAM)
    tour_id = tour["id"]
    # Semicolons and decimal commas, as a European spreadsheet writes them; the second point is north of the frame.
    sheet = tmp_path / "falls.csv"
    sheet.write_text("Name;Lat;Lon;Notes\nSahalie Falls;44,40;-122,01;x\nKoosah Falls;44,45;-122,05;\"two\nlines\"\n", encoding="utf-8-sig")
    panel.open(f"/tours/{tour_id}")
    choose_and_preview(panel, sheet)

    assert panel.heading() == "Import preview"
    assert "1 waypoint will be added, 0 changed, 1 skipped." in panel.text("main")
    assert panel.text("#import-format") == "The file was read as CSV."
    assert "latitude: “Lat”" in panel.text("#import-columns") and "longitude: “Lon”" in panel.text("#import-columns")
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in panel.all("#import-plan tbody tr")]
    assert rows == [["add", "Sahalie Falls", "44.4", "-122.01", ""], ["skip", "Koosah Falls", "44.45", "-122.05", "outside the tour's frame"]], rows
    assert "1 point falls outside the tour's frame" in panel.text("#fit-frame")
    # A spreadsheet has no route: the preview says the tour's route is kept (not "a line of 0 points").
    assert "The file has no route: the tour's route stays as it is." in panel.text("main")
    assert "0 points" not in panel.text("main")
    assert store.waypoints(tour_id) == []
    panel.assert_accessible("import preview with points outside the frame")

    # "Fit the frame to these points and apply": both points saved, the frame grown past the northern one.
    panel.submit(panel.find("#fit-frame button[type=submit]"))
    assert panel.path() == f"/tours/{tour_id}"
    assert panel.notice() == "Imported: 2 added, 0 changed, 0 skipped."
    assert [w["name"] for w in store.waypoints(tour_id)] == ["Sahalie Falls", "Koosah Falls"]
    frame = api.tour(tour_id)["frame"]
    assert frame["north"] > 44.45 and frame["south"] == SANTIAM["south"] and frame["west"] == SANTIAM["west"], frame


def test_a_malformed_import_file_is_refused(admin_panel, e2e_site, api, store, tmp_path):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Fish Lake Remount", frame=SANTIAM)
    broken = tmp_path / "broken.geojson"
    broken.write_text('{"type": "FeatureCollection", "features": [{"type": "Feature", ')
    panel.open(f"/tours/{tour['id']}")
    choose_and_preview(panel, broken)

    # Refused, with the reason; nothing stored.
    assert "The GeoJSON is not valid JSON." in panel.text("main")
    assert not panel.all("form[action$='/apply']")
    assert store.waypoints(tour["id"]) == []
    assert store.tour(tour["id"])["route"] is None
    assert not [e for e in store.audit("tour.import", "tour") if e["objectId"] == str(tour["id"])]
    panel.assert_accessible("import refused")

    # The message belongs next to the file field of the tour page, as on the panel's other forms.
    assert panel.heading() == "Fish Lake Remount", "the tour page again, not an error page"
    field = panel.find("#import-file")
    assert "is-invalid" in field.get_attribute("class").split()
    assert "The GeoJSON is not valid JSON." in panel.text("#import-form .invalid-feedback")
