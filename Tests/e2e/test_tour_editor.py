"""The map editor with a mouse: create a tour, frame it by dragging the rectangle's corners, place waypoints by
clicking the map (a name in a small form at that place, no page load), move one by dragging its marker (and undo
it), reorder by dragging the list, delete one.

Each step checks what the page shows and what the server stored (SQLite, read-only, and the management API)."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from support import MapScale

SANTIAM = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}


def handle_centers(panel):
    return panel.center(panel.find(".frame-handle-nw")), panel.center(panel.find(".frame-handle-se"))


def scale_of_frame(panel) -> MapScale:
    """Pixel ↔ degree scale of the current map view, measured on the frame rectangle's corner handles."""
    nw, se = handle_centers(panel)
    f = panel.frame_inputs()
    return MapScale.between(nw, se, f["north"], f["west"], f["south"], f["east"])


def test_create_a_tour_and_frame_it_by_dragging_the_corners(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour_id = panel.create_tour(e2e_site, "Iron Mountain Loop", "Wildflowers in June.")

    # The page: a new tour, no frame yet, the map offers to frame what is visible.
    assert panel.notice() == "Tour created. Now frame its area on the map."
    assert panel.heading() == "Iron Mountain Loop"
    assert panel.text("#frame-summary") == "not set"
    assert all(panel.find(f"#{k}").get_attribute("value") == "" for k in ("north", "south", "east", "west"))
    panel.assert_accessible("tour page, new tour")
    stored = store.tour(tour_id)
    assert stored["name"] == "Iron Mountain Loop" and stored["mapName"] == "iron-mountain-loop" and stored["state"] == "draft"
    assert stored["frameNorth"] is None
    assert api.tour(tour_id).get("frame") is None

    # A new tour opens on a district, not a continent: zoom in once (the + control), then frame the visible area.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    for _ in range(1):
        panel.find("#tour-map a.leaflet-control-zoom-in").click()
        panel.wait_map_idle()
    frame_button = panel.find("#tour-map .leaflet-top.leaflet-right button")
    assert frame_button.text == "Frame the visible area"
    frame_button.click()
    assert not panel.all("#tour-map .leaflet-top.leaflet-right button"), "the button goes once there is a frame"
    for corner in ("nw", "ne", "sw", "se"):
        assert panel.find(f".frame-handle-{corner}").is_displayed()
    start = panel.frame_inputs()
    assert start["north"] > start["south"] and start["east"] > start["west"]
    scale = scale_of_frame(panel)
    lat_tol, lng_tol = scale.tolerance(1.5)

    # Drag the north-west corner up and left, and the south-east corner up and left.
    (nw_x, nw_y), (se_x, se_y) = handle_centers(panel)
    panel.drag(panel.find(".frame-handle-nw"), -60, -40)
    panel.drag(panel.find(".frame-handle-se"), -120, -50)
    (nw2_x, nw2_y), (se2_x, se2_y) = handle_centers(panel)
    assert (round(nw2_x - nw_x), round(nw2_y - nw_y)) == (-60, -40), "the NW handle follows the mouse"
    assert (round(se2_x - se_x), round(se2_y - se_y)) == (-120, -50), "the SE handle follows the mouse"

    # The four number inputs followed the corners.
    expected_north, expected_west = scale.to_latlng(nw_x - 60, nw_y - 40)
    expected_south, expected_east = scale.to_latlng(se_x - 120, se_y - 50)
    moved = panel.frame_inputs()
    assert moved["north"] == pytest.approx(expected_north, abs=lat_tol)
    assert moved["west"] == pytest.approx(expected_west, abs=lng_tol)
    assert moved["south"] == pytest.approx(expected_south, abs=lat_tol)
    assert moved["east"] == pytest.approx(expected_east, abs=lng_tol)
    assert moved["north"] > start["north"] and moved["west"] < start["west"]
    assert moved["south"] > start["south"] and moved["east"] < start["east"]
    # ...and the NE/SW handles sit on the new corners.
    ne = panel.center(panel.find(".frame-handle-ne"))
    sw = panel.center(panel.find(".frame-handle-sw"))
    assert (round(ne[0]), round(ne[1])) == (round(se2_x), round(nw2_y))
    assert (round(sw[0]), round(sw[1])) == (round(nw2_x), round(se2_y))
    texts = {k: panel.find(f"#{k}").get_attribute("value") for k in ("north", "south", "east", "west")}

    # Save; the server keeps exactly what the inputs said.
    panel.submit(panel.find("#frame-form button[type=submit]"))
    assert panel.path() == f"/tours/{tour_id}"
    assert panel.notice() == "Frame saved."
    assert panel.text("#frame-summary") == "N {north:.5f}, S {south:.5f}, E {east:.5f}, W {west:.5f}".format(**{k: float(v) for k, v in texts.items()})
    assert {k: panel.find(f"#{k}").get_attribute("value") for k in texts} == texts
    stored = store.tour(tour_id)
    assert {k: stored["frame" + k.capitalize()] for k in texts} == {k: float(v) for k, v in texts.items()}
    assert api.tour(tour_id)["frame"] == {k: float(v) for k, v in texts.items()}
    assert [e["action"] for e in store.audit("tour.frame", "tour") if e["objectId"] == str(tour_id)] == ["tour.frame"]
    panel.assert_accessible("tour page, framed")
    # The reloaded map shows the saved frame with its handles.
    assert panel.find(".frame-handle-nw").is_displayed()


def test_waypoints_by_clicking_the_map_then_drag_reorder_and_delete(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Santiam Pass Walk", frame=SANTIAM)
    tour_id = tour["id"]
    panel.open(f"/tours/{tour_id}")
    assert "No waypoints yet." in panel.text("main")

    # Three clicks inside the frame, each followed by a name in the form that opens there, and Enter: no page load.
    panel.driver.execute_script("window.__marker = 1")
    places = [("Fish Lake", 0.25, 0.70), ("Hackleman Grove", 0.55, 0.35), ("Tombstone Summit", 0.80, 0.60)]
    for number, (name, fx, fy) in enumerate(places, start=1):
        panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
        panel.wait_map_idle()
        scale = scale_of_frame(panel)
        (nw_x, nw_y), (se_x, se_y) = handle_centers(panel)
        x, y = nw_x + fx * (se_x - nw_x), nw_y + fy * (se_y - nw_y)
        panel.click_map_at(x, y)
        latitude = float(panel.find("#wp-latitude").get_attribute("value") or "nan")
        longitude = float(panel.find("#wp-longitude").get_attribute("value") or "nan")
        expected = scale.to_latlng(x, y)
        lat_tol, lng_tol = scale.tolerance(1.5)
        assert latitude == pytest.approx(expected[0], abs=lat_tol) and longitude == pytest.approx(expected[1], abs=lng_tol)
        popup_name = panel.visible("#tour-map form[data-new-waypoint] input[name='name']")
        assert panel.focused() == popup_name, "the name field is ready for typing"
        panel.press(name, Keys.ENTER)
        panel.wait().until(lambda d: len(panel.waypoint_rows()) == number)
        assert panel.text("#map-status") == f"Waypoint “{name}” added."
        panel.wait().until(lambda d: not panel.all("#tour-map form[data-new-waypoint]"))  # it closes (a 0.2 s fade)
        stored = store.waypoints(tour_id)[-1]
        assert (stored["name"], stored["position"]) == (name, number)
        assert stored["latitude"] == pytest.approx(latitude, abs=1e-6) and stored["longitude"] == pytest.approx(longitude, abs=1e-6)
        assert panel.waypoint_rows()[-1] == (name, f"{stored['latitude']:.6f}, {stored['longitude']:.6f}")
        assert panel.all(f"#tour-map [data-waypoint-id='{stored['id']}']"), "the new marker carries its waypoint's id"
    assert panel.driver.execute_script("return window.__marker") == 1, "adding waypoints on the map loads no page"
    assert len(panel.all("#tour-map .waypoint-marker")) == 3
    assert [m.text for m in panel.all("#tour-map .waypoint-marker")] == ["1", "2", "3"]
    panel.assert_accessible("tour page with waypoints")

    # A click outside the frame adds nothing: the map says why.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    (nw_x, _), (se_x, se_y) = handle_centers(panel)
    map_bottom = panel.driver.execute_script("const r = document.getElementById('tour-map').getBoundingClientRect(); return r.bottom + scrollY")
    assert map_bottom - se_y > 30, "the frame leaves room below it (it is wider than the map's shape)"
    panel.find("#wp-latitude").clear()
    panel.click_map_at((nw_x + se_x) / 2, se_y + 15)
    assert panel.visible("#tour-map .leaflet-popup-content").text == "This place is outside the frame."
    assert panel.find("#wp-latitude").get_attribute("value") == ""
    panel.find("#tour-map .leaflet-popup-close-button").click()

    # Drag the second marker 50 px right and 30 px down: the list and the server follow, without a reload.
    scale = scale_of_frame(panel)
    marker = panel.find("#tour-map .waypoint-marker[title='Hackleman Grove']")
    before = store.waypoints(tour_id)[1]
    mx, my = panel.center(marker)
    panel.driver.execute_script("window.__e2eSamePage = true")
    panel.drag(marker, 50, 30)
    expected = scale.to_latlng(mx + 50, my + 30)
    row = panel.find(f"#waypoint-{before['id']} .small")
    panel.wait().until(lambda d: row.text != f"{before['latitude']:.6f}, {before['longitude']:.6f}")
    panel.wait().until(lambda d: store.waypoints(tour_id)[1]["latitude"] != before["latitude"])
    after = store.waypoints(tour_id)[1]
    lat_tol, lng_tol = scale.tolerance(1.5)
    assert after["latitude"] == pytest.approx(expected[0], abs=lat_tol)
    assert after["longitude"] == pytest.approx(expected[1], abs=lng_tol)
    assert row.text == f"{after['latitude']:.6f}, {after['longitude']:.6f}"
    assert api.tour(tour_id)["waypoints"][1]["latitude"] == after["latitude"]
    assert panel.driver.execute_script("return window.__e2eSamePage === true"), "moving a marker does not reload the page"
    assert panel.text("#map-status").startswith("“Hackleman Grove” moved.")

    # Undo puts it back where it was, on the map, in the list and on the server.
    panel.find("#map-status button[data-action='undo']").click()
    panel.wait().until(lambda d: store.waypoints(tour_id)[1]["latitude"] == pytest.approx(before["latitude"], abs=1e-7))
    assert store.waypoints(tour_id)[1]["longitude"] == pytest.approx(before["longitude"], abs=1e-7)
    panel.wait().until(lambda d: row.text == f"{before['latitude']:.6f}, {before['longitude']:.6f}")
    assert panel.center(panel.find(f"#tour-map [data-waypoint-id='{before['id']}']")) == pytest.approx((mx, my), abs=1.5)
    assert panel.text("#map-status") == "“Hackleman Grove” is back where it was."

    # Drag "Fish Lake" by its ⠿ handle below "Tombstone Summit".
    ids = [w["id"] for w in store.waypoints(tour_id)]
    first = panel.find(f"#waypoint-{ids[0]}")
    panel.drag_list_item(first.find_element(By.CSS_SELECTOR, ".drag-handle"), panel.find(f"#waypoint-{ids[2]}"), after=True)
    panel.wait().until(lambda d: [w["id"] for w in store.waypoints(tour_id)] == [ids[1], ids[2], ids[0]])
    assert [name for name, _ in panel.waypoint_rows()] == ["Hackleman Grove", "Tombstone Summit", "Fish Lake"]
    panel.wait().until(lambda d: [m.text for m in d.find_elements(By.CSS_SELECTOR, "#tour-map .waypoint-marker[title='Fish Lake']")] == ["3"])
    assert [w["order"] for w in api.tour(tour_id)["waypoints"]] == [1, 2, 3]
    assert [w["name"] for w in api.tour(tour_id)["waypoints"]] == ["Hackleman Grove", "Tombstone Summit", "Fish Lake"]
    assert panel.find(f"#waypoint-{ids[0]} button[aria-label='Move Fish Lake down']").get_attribute("disabled") is not None, \
        "the last row's ↓ is disabled after the drag"
    assert panel.find(f"#waypoint-{ids[1]} button[aria-label='Move Hackleman Grove up']").get_attribute("disabled") is not None
    assert panel.driver.execute_script("return window.__e2eSamePage === true"), "reordering does not reload the page"
    panel.open(f"/tours/{tour_id}")
    assert [name for name, _ in panel.waypoint_rows()] == ["Hackleman Grove", "Tombstone Summit", "Fish Lake"]

    # Delete the middle one (after confirming); the rest close ranks.
    panel.submit(panel.find(f"#waypoint-{ids[2]} button[aria-label='Delete Tombstone Summit']"), confirm="Tombstone Summit")
    assert panel.notice() == "Waypoint “Tombstone Summit” deleted."
    assert [name for name, _ in panel.waypoint_rows()] == ["Hackleman Grove", "Fish Lake"]
    assert len(panel.all("#tour-map .waypoint-marker")) == 2
    stored = store.waypoints(tour_id)
    assert [(w["name"], w["position"]) for w in stored] == [("Hackleman Grove", 1), ("Fish Lake", 2)]
    assert [w["name"] for w in api.tour(tour_id)["waypoints"]] == ["Hackleman Grove", "Fish Lake"]
    assert len([e for e in store.audit("waypoint.create") if e["detail"].endswith(f" in tour {tour_id}")]) == 3
    assert [e for e in store.audit("waypoint.reorder", "tour") if e["objectId"] == str(tour_id)]
    assert [e for e in store.audit("waypoint.delete") if e["detail"] == "Tombstone Summit"]


def test_a_frame_that_leaves_a_waypoint_outside_is_refused(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Clear Lake Shore", frame=SANTIAM)
    api.add_waypoint(tour["id"], "Boat Ramp", 44.40, -122.15)
    panel.open(f"/tours/{tour['id']}")
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    # Drag the west edge east, past the waypoint.
    marker_x, _ = panel.center(panel.find("#tour-map .waypoint-marker"))
    (nw_x, _), _ = handle_centers(panel)
    panel.drag(panel.find(".frame-handle-nw"), round(marker_x - nw_x) + 30, 0)
    assert panel.frame_inputs()["west"] > -122.15
    panel.submit(panel.find("#frame-form button[type=submit]"))
    assert "Boat Ramp" in panel.text("#frame-error")
    panel.assert_accessible("tour page, refused frame")
    stored = store.tour(tour["id"])
    assert (stored["frameWest"], stored["frameEast"]) == (SANTIAM["west"], SANTIAM["east"]), "the stored frame is unchanged"


def test_edit_a_waypoint_on_its_page_by_clicking_the_map(ranger_panel, e2e_site, api, store):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Sawyers Cave", frame=SANTIAM)
    waypoint = api.add_waypoint(tour["id"], "Cave Mouth", 44.40, -122.10, "Bring a lamp.")
    panel.open(f"/tours/{tour['id']}")
    panel.submit(panel.find(f"#waypoint-{waypoint['id']} a.waypoint-name"))
    assert panel.path() == f"/tours/{tour['id']}/waypoints/{waypoint['id']}"
    assert panel.heading() == "Cave Mouth"
    assert panel.find("#wp-latitude").get_attribute("value") == "44.400000"

    # Click the map 40 px left of the marker: the marker jumps there and the fields follow.
    marker = panel.find("#tour-map .waypoint-marker")
    mx, my = panel.center(marker)
    panel.click_map_at(mx - 40, my)
    panel.wait().until(lambda d: panel.find("#wp-longitude").get_attribute("value") != "-122.100000")
    longitude = float(panel.find("#wp-longitude").get_attribute("value"))
    latitude = float(panel.find("#wp-latitude").get_attribute("value"))
    assert longitude < -122.10 and latitude == pytest.approx(44.40, abs=0.002)
    assert panel.center(panel.find("#tour-map .waypoint-marker"))[0] == pytest.approx(mx - 40, abs=1)
    assert store.waypoints(tour["id"])[0]["longitude"] == -122.10, "nothing is stored before saving"

    panel.fill(panel.find("#wp-name"), "Sawyers Cave Mouth")
    panel.submit(panel.find("#waypoint-edit-form button[type=submit]"))
    assert panel.notice() == "Waypoint saved."
    assert panel.heading() == "Sawyers Cave Mouth"
    stored = store.waypoints(tour["id"])[0]
    assert (stored["name"], stored["latitude"], stored["longitude"], stored["description"]) == \
        ("Sawyers Cave Mouth", latitude, longitude, "Bring a lamp.")


def zone_width(panel) -> float:
    """The trigger-zone circle's drawn width in CSS pixels (its SVG path's bounding box)."""
    return panel.driver.execute_script("return document.querySelector('#tour-map path.trigger-zone').getBoundingClientRect().width")


def test_trigger_radius_by_typing_and_by_dragging_the_circle_edge(admin_panel, e2e_site, api, store):
    """The waypoint page draws the trigger zone; typing a radius redraws it, dragging its edge handle sets the
    field; both save. The tour page shows every zone and warns when two overlap."""
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Clear Lake Zones", frame=SANTIAM)
    lake = api.add_waypoint(tour["id"], "Clear Lake", 44.40, -122.10)
    api.add_waypoint(tour["id"], "Boat Ramp", 44.4004, -122.10)  # about 44 m away: two 30 m zones overlap
    panel.open(f"/tours/{tour['id']}/waypoints/{lake['id']}")
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.wait_map_idle()
    radius = panel.find("#wp-radius")
    assert radius.get_attribute("value") == "30"
    assert panel.find("label[for='wp-radius']").text == "Trigger radius (metres)"
    panel.assert_accessible("waypoint page with its trigger zone")

    # Typing: the circle follows at once, and the value is saved with the form.
    before = zone_width(panel)
    panel.fill(radius, "80")
    panel.wait().until(lambda d: zone_width(panel) > before * 2.4)
    panel.submit(panel.find("#waypoint-edit-form button[type=submit]"))
    assert store.waypoints(tour["id"])[0]["triggerRadiusMeters"] == 80

    # Dragging the edge handle 40 px east: the field shows the new radius, which is saved.
    panel.open(f"/tours/{tour['id']}/waypoints/{lake['id']}")
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.wait_map_idle()
    metres_per_pixel = 160 / zone_width(panel)  # the page fits the map to the 80 m zone
    panel.drag(panel.find("#tour-map .zone-handle"), 40, 0)
    dragged = int(panel.find("#wp-radius").get_attribute("value"))
    assert dragged == pytest.approx(80 + 40 * metres_per_pixel, abs=3 * metres_per_pixel + 1), (dragged, metres_per_pixel)
    panel.submit(panel.find("#waypoint-edit-form button[type=submit]"))
    assert store.waypoints(tour["id"])[0]["triggerRadiusMeters"] == dragged
    assert api.tour(tour["id"])["waypoints"][0]["triggerRadiusMeters"] == dragged

    # A radius out of range comes back next to the field.
    panel.submit_form("#waypoint-edit-form", triggerRadiusMeters="900")
    assert "is-invalid" in panel.find("#wp-radius").get_attribute("class")
    assert "5 to 500" in panel.text("#waypoint-edit-form .invalid-feedback")
    assert store.waypoints(tour["id"])[0]["triggerRadiusMeters"] == dragged
    panel.assert_accessible("waypoint page, radius refused")

    # The tour page: both zones drawn in the warning colour, and the warning (not a refusal) in the publishing card.
    panel.open(f"/tours/{tour['id']}")
    assert len(panel.all("#tour-map path.trigger-zone-overlap")) == 2
    assert "overlap" in panel.text("#publish-warnings")
    panel.assert_accessible("tour page with overlapping trigger zones")


def test_a_spanish_version_of_a_waypoint_on_its_language_tab(admin_panel, e2e_site, api):
    """The tour gets Spanish on its edit page, the waypoint a Spanish name and description on its Spanish tab
    (plain links and forms, no script needed); removing Spanish again asks before its texts are deleted."""
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Sahalie Falls", frame=SANTIAM, description="Two waterfalls on the McKenzie.")
    falls = api.add_waypoint(tour["id"], "Sahalie Falls", 44.35 + 0.05, -122.05, "The upper falls.")

    panel.open(f"/tours/{tour['id']}/edit")
    assert panel.find("label[for='default-language']").text == "Default language"
    panel.find("#language-es").click()
    panel.submit(panel.find("#languages-form button[type=submit]"))
    assert api.tour(tour["id"])["languages"] == ["en", "es"]

    panel.open(f"/tours/{tour['id']}/waypoints/{falls['id']}")
    tabs = [link.text for link in panel.all(".language-tabs .nav-link")]
    assert tabs == ["English · default", "Spanish (Español)"], tabs
    panel.find(".language-tabs a[hreflang='es']").click()
    assert panel.find(".language-tabs a[aria-current='page']").text == "Spanish (Español)"
    assert panel.find("label[for='tr-name']").text == "Name in Spanish (Español)"
    assert "English: Sahalie Falls" in panel.text("#tr-name-default")
    panel.assert_accessible("waypoint page, Spanish tab")
    panel.submit_form("#translation-form", name="Cascada Sahalie", description="La cascada de arriba.")
    assert api.tour(tour["id"])["waypoints"][0]["localized"] == {"es": {"name": "Cascada Sahalie", "description": "La cascada de arriba."}}
    assert panel.find("#tr-name").get_attribute("value") == "Cascada Sahalie"

    # Removing Spanish while the waypoint has Spanish text: refused, with a box to confirm; confirmed, it goes.
    panel.open(f"/tours/{tour['id']}/edit")
    panel.find("#language-es").click()
    panel.submit(panel.find("#languages-form button[type=submit]"))
    assert "Spanish still has texts of “Sahalie Falls”" in panel.text("#languages-error")
    assert api.tour(tour["id"])["languages"] == ["en", "es"]
    panel.assert_accessible("tour languages, removal to confirm")
    panel.find("#confirm-removal").click()
    panel.submit(panel.find("#languages-form button[type=submit]"))
    stored = api.tour(tour["id"])
    assert stored["languages"] == ["en"] and stored["waypoints"][0]["localized"] == {}


def type_frame(panel, frame: dict) -> None:
    for key in ("north", "south", "east", "west"):
        panel.fill(panel.find(f"#{key}"), str(frame[key]))


def map_view(panel) -> dict:
    return panel.driver.execute_script("""
        const b = document.getElementById('tour-map').leafletMap.getBounds();
        return {north: b.getNorth(), south: b.getSouth(), east: b.getEast(), west: b.getWest()};""")


def test_a_typed_frame_fits_the_map_and_odd_frames_are_checked_before_saving(admin_panel, e2e_site, api, store):
    panel = admin_panel
    tour_id = api.create_tour(e2e_site, "Typed Frame")["id"]
    panel.open(f"/tours/{tour_id}")

    # Typed edges: the map fits the rectangle, which fills a good part of the view; its corners are apart.
    type_frame(panel, SANTIAM)

    def fitted(_):
        view = map_view(panel)
        inside = view["north"] >= SANTIAM["north"] and view["south"] <= SANTIAM["south"] \
            and view["east"] >= SANTIAM["east"] and view["west"] <= SANTIAM["west"]
        fill = max((SANTIAM["north"] - SANTIAM["south"]) / (view["north"] - view["south"]),
                   (SANTIAM["east"] - SANTIAM["west"]) / (view["east"] - view["west"]))
        return inside and fill > 0.6
    panel.wait().until(fitted)
    panel.wait_map_idle()
    nw, se = handle_centers(panel)
    assert se[0] - nw[0] > 200 and se[1] - nw[1] > 100, f"the rectangle is drawn large: {nw} → {se}"

    # A 150 m square: saving asks first. Dismissed, nothing is sent; accepted, it is saved.
    tiny = {"north": 44.40135, "south": 44.4, "east": -122.1, "west": -122.1019}
    type_frame(panel, tiny)
    panel.driver.execute_script("window.__marker = 1")
    panel.find("#frame-form button[type=submit]").click()
    question = panel.wait().until(EC.alert_is_present())
    assert "very small" in question.text
    question.dismiss()
    assert "Not saved" in panel.text("#frame-message")
    assert panel.driver.execute_script("return window.__marker") == 1
    assert api.tour(tour_id).get("frame") is None
    panel.submit(panel.find("#frame-form button[type=submit]"), confirm="very small")
    assert panel.notice() == "Frame saved."
    assert api.tour(tour_id)["frame"] == tiny

    # Over the limit (about 8,000 km²): refused beside the fields, with no request.
    audits = len(store.audit("tour.frame", "tour"))
    type_frame(panel, {"north": 45.0, "south": 44.0, "east": -121.0, "west": -122.0})
    panel.driver.execute_script("window.__marker = 1")
    panel.find("#frame-form button[type=submit]").click()
    panel.wait().until(lambda d: "over the 2,500 km² limit" in panel.text("#frame-message"))
    assert panel.driver.execute_script("return window.__marker") == 1
    assert api.tour(tour_id)["frame"] == tiny
    assert len(store.audit("tour.frame", "tour")) == audits
