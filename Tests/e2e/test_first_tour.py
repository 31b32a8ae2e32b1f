"""A newcomer's first tour, built on the tour page: each stop's name, text and files in the form that opens on the map,
the stops furnished in the panel beside the map (text, alt text, the next stop), the checklist and the duration kept
up to date, the keyboard's ways to the same forms, and an upload refusal that is seen. No step loads a page: a marker
set on `window` survives only as long as the document does."""
from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import png_bytes, reset_viewport, set_viewport

FRAME = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
MARK = "window.__firstTourMarker = 1"
SAME_PAGE = "return window.__firstTourMarker === 1"


def frame_point(panel, fx: float, fy: float) -> tuple[float, float]:
    """Document coordinates of a point of the frame, as fractions of its width and height from the north-west corner."""
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.wait_map_idle()
    nw = panel.center(panel.find(".frame-handle-nw"))
    se = panel.center(panel.find(".frame-handle-se"))
    return nw[0] + fx * (se[0] - nw[0]), nw[1] + fy * (se[1] - nw[1])


def in_viewport(panel, element) -> bool:
    return panel.driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;", element)


def publishing_text(panel) -> str:
    return panel.find("[data-publishing]").text


def editor_name(panel) -> str:
    return panel.visible("form[data-edit-waypoint] input[name='name']").get_attribute("value")


def test_stops_are_written_and_furnished_beside_the_map_without_a_page_load(ranger_panel, e2e_site, api, store, tmp_path):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Clear Lake Circuit", frame=FRAME)
    panel.open(f"/tours/{tour['id']}")
    panel.driver.execute_script(MARK)
    assert "Add at least one waypoint." in panel.text("[data-checklist]")
    duration_before = panel.text("[data-duration]")
    assert duration_before.startswith("About 0 min")

    # The first stop: a name, its text and a picture, all in the form that opens where the map was clicked.
    (tmp_path / "clear-lake.png").write_bytes(png_bytes())
    panel.click_map_at(*frame_point(panel, 0.3, 0.6))
    form = panel.visible("#tour-map form[data-new-waypoint]")
    panel.fill(form.find_element(By.NAME, "name"), "Trailhead")
    panel.fill(form.find_element(By.CSS_SELECTOR, "textarea[name='description']"), "Where the trail leaves the road.")
    form.find_element(By.CSS_SELECTOR, "input[type='file']").send_keys(str(tmp_path / "clear-lake.png"))
    form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    panel.wait().until(lambda d: len(panel.waypoint_rows()) == 1)
    trailhead = store.waypoints(tour["id"])[0]
    assert (trailhead["name"], trailhead["description"]) == ("Trailhead", "Where the trail leaves the road.")
    # The picture goes up through the upload API, with its progress below the map, and is scanned.
    panel.wait(60).until(lambda d: [(a["originalName"], a["scanStatus"]) for a in store.assets(trailhead["id"])] == [("clear-lake.png", "clean")])
    assert "clear-lake.png" in panel.text("#map-uploads")

    # The page is not stale: the checklist and the duration are the server's new ones, and the lower form is empty.
    panel.wait().until(lambda d: "Add at least one waypoint." not in publishing_text(panel))
    panel.wait().until(lambda d: panel.text("[data-duration]") != duration_before)
    assert "min at the waypoints" in panel.text("[data-duration]")
    assert [panel.find(f"#{field}").get_attribute("value") for field in ("wp-name", "wp-latitude", "wp-longitude")] == ["", "", ""]

    # A second stop with its name only.
    panel.click_map_at(*frame_point(panel, 0.7, 0.4))
    panel.visible("#tour-map form[data-new-waypoint] input[name='name']")
    panel.press("Lava Beds", Keys.ENTER)
    panel.wait().until(lambda d: len(panel.waypoint_rows()) == 2)
    panel.wait().until(lambda d: re.search(r"[1-9]\d*\.\d km walking|0\.[1-9] km walking", panel.text("[data-duration]")))

    # A click on the first marker opens its panel beside the map: its text and its picture, whose alt text is written there.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.find(f"#tour-map [data-waypoint-id='{trailhead['id']}']").click()
    panel.wait().until(lambda d: editor_name(panel) == "Trailhead")
    editor = panel.find("form[data-edit-waypoint]")
    assert editor.find_element(By.NAME, "description").get_attribute("value") == "Where the trail leaves the road."
    image = store.assets(trailhead["id"])[0]
    alt = editor.find_element(By.CSS_SELECTOR, f"fieldset[data-asset-id='{image['id']}'] textarea[name='altText']")
    panel.fill(alt, "Clear Lake, green and still, below the road.")
    panel.fill(editor.find_element(By.NAME, "description"), "Where the trail leaves the road, by the spring.")
    panel.assert_accessible("tour page with a stop's panel open")
    editor.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    panel.wait().until(lambda d: store.waypoints(tour["id"])[0]["description"] == "Where the trail leaves the road, by the spring.")
    panel.wait().until(lambda d: store.assets(trailhead["id"])[0]["altText"] == "Clear Lake, green and still, below the road.")
    assert panel.text("[data-editor-status]") == "“Trailhead” saved."

    # "Next stop" saves and opens the next one, whose text is written and saved the same way.
    panel.find("form[data-edit-waypoint] [data-action='next-waypoint']").click()
    panel.wait().until(lambda d: editor_name(panel) == "Lava Beds")
    editor = panel.find("form[data-edit-waypoint]")
    assert editor.find_element(By.CSS_SELECTOR, "[data-action='next-waypoint']").get_attribute("disabled") is not None, "the last stop has no next"
    panel.fill(editor.find_element(By.NAME, "name"), "Lava Beds Overlook")
    panel.fill(editor.find_element(By.NAME, "description"), "Black rock as far as the eye goes.")
    editor.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
    panel.wait().until(lambda d: (store.waypoints(tour["id"])[1]["name"], store.waypoints(tour["id"])[1]["description"])
                       == ("Lava Beds Overlook", "Black rock as far as the eye goes."))
    panel.wait().until(lambda d: panel.waypoint_rows()[1][0] == "Lava Beds Overlook")

    # A click on a row (beside its link and buttons) opens that stop's panel too.
    panel.driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", panel.find(f"#waypoint-{trailhead['id']} .small"))
    panel.find(f"#waypoint-{trailhead['id']} .small").click()
    panel.wait().until(lambda d: editor_name(panel) == "Trailhead")

    assert panel.driver.execute_script(SAME_PAGE), "building the two stops loaded a page"
    panel.assert_accessible("tour page after two stops built beside the map")

    # On a 375 px phone the panel sits below the map, whole, with no sideways scrolling.
    set_viewport(panel.driver, 375, 812, mobile=True)
    try:
        panel.wait().until(lambda d: panel.horizontal_overflow() == 0)
        assert panel.in_view_horizontally(panel.find("form[data-edit-waypoint] [data-action='next-waypoint']"))
        assert panel.in_view_horizontally(panel.find("form[data-edit-waypoint] textarea[name='description']"))
    finally:
        reset_viewport(panel.driver)


def test_enter_on_the_map_adds_at_its_centre_and_a_skip_link_leads_to_the_typed_form(ranger_panel, e2e_site, api, store):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Keyboard Meadow", frame=FRAME)
    panel.open(f"/tours/{tour['id']}")
    panel.driver.execute_script(MARK)

    # TAB from the top reaches the skip link before the map; Enter on it puts the focus in the typed form.
    skip = panel.tab_to(lambda element: element.get_attribute("data-skip-to-form") is not None)
    assert skip.is_displayed(), "the skip link shows when it has the focus"
    panel.press(Keys.ENTER)
    panel.wait().until(lambda d: panel.focused().get_attribute("id") == "wp-name")

    # The focused map: Enter offers the new-waypoint form at the map's centre.
    panel.tab_to(lambda element: element.get_attribute("id") == "tour-map", backwards=True)
    centre = panel.driver.execute_script("const c = document.getElementById('tour-map').leafletMap.getCenter(); return [c.lat, c.lng]")
    panel.press(Keys.ENTER)
    name = panel.visible("#tour-map form[data-new-waypoint] input[name='name']")
    assert panel.focused() == name
    panel.press("Meadow Gate", Keys.ENTER)
    panel.wait().until(lambda d: len(panel.waypoint_rows()) == 1)
    stored = store.waypoints(tour["id"])[0]
    assert stored["latitude"] == pytest.approx(centre[0], abs=1e-5) and stored["longitude"] == pytest.approx(centre[1], abs=1e-5)

    # The focus is on the new row, so the keyboard goes on from there.
    panel.wait().until(lambda d: panel.focused().get_attribute("class") == "waypoint-name"
                       and panel.focused().text == "Meadow Gate")
    row = panel.find(f"#waypoint-{stored['id']}")
    assert row.find_element(By.CSS_SELECTOR, "a.waypoint-name") == panel.focused()
    # Its "Edit here" button opens the panel beside the map, with the focus in the stop's name.
    panel.press(Keys.TAB)
    assert panel.focused().get_attribute("data-action") == "edit-waypoint"
    panel.press(Keys.ENTER)
    panel.wait().until(lambda d: panel.focused().get_attribute("id") == "edit-waypoint-name")
    assert panel.driver.execute_script(SAME_PAGE), "the keyboard's add loaded a page"
    panel.assert_accessible("tour page after a keyboard add on the map")


def test_a_file_over_the_limit_is_refused_in_view_with_the_focus_in_the_pages_unit(ranger_panel, e2e_site, api, tmp_path, store):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Heavy Files Trail", frame=FRAME)
    waypoint = api.add_waypoint(tour["id"], "Big Tree", 44.40, -122.1)
    # A sparse file over the server's limit (2 GiB): its size is what counts, and the browser refuses it before sending.
    big = tmp_path / "whole-day.mp4"
    with big.open("wb") as file:
        file.truncate(3 * 1024 ** 3)

    # On the tour page, in the stop's panel beside the map.
    panel.open(f"/tours/{tour['id']}")
    panel.find(f"#waypoint-{waypoint['id']} [data-action='edit-waypoint']").click()
    panel.wait().until(lambda d: editor_name(panel) == "Big Tree")
    panel.find("#edit-waypoint-files").send_keys(str(big))
    panel.find("form[data-edit-waypoint] button[type='submit']").click()
    refusal = panel.visible(".upload-refusal")
    panel.wait().until(lambda d: panel.focused() == refusal)
    assert in_viewport(panel, refusal), "the refusal is scrolled into view"
    text = refusal.text
    assert "“whole-day.mp4” is 3.0 GiB, over the 2.0 GiB limit for one file: not uploaded." in text, text
    assert "bytes" not in text and "Make it smaller" in text
    assert store.uploads(waypoint["id"]) == [] and store.assets(waypoint["id"]) == []
    panel.assert_accessible("tour page with an upload refused")

    # On the waypoint page: the same refusal, in the same unit as the page's "Up to …".
    panel.open(f"/tours/{tour['id']}/waypoints/{waypoint['id']}")
    help_text = panel.text("#upload-help")
    unit = re.search(r"Up to [\d.]+ (\w+)", help_text).group(1)
    panel.find("#upload-files").send_keys(str(big))
    refusal = panel.visible(".upload-refusal")
    panel.wait().until(lambda d: panel.focused() == refusal)
    assert in_viewport(panel, refusal)
    assert f" {unit} limit" in refusal.text and "bytes" not in refusal.text and "Make it smaller" in refusal.text
    assert store.uploads(waypoint["id"]) == [] and store.assets(waypoint["id"]) == []
    panel.assert_accessible("waypoint page with an upload refused")


def map_centre(panel) -> tuple[float, float]:
    return tuple(panel.driver.execute_script("const c = document.getElementById('tour-map').leafletMap.getCenter(); return [c.lat, c.lng]"))


def test_a_new_tour_opens_over_the_sites_home_area_and_the_place_search_moves_the_map(admin_panel, api, store):
    panel = admin_panel
    panel.create_site("crater-district", "Crater District", "Home area and time zone.")
    site = store.row("SELECT id FROM site WHERE slug = ?", "crater-district")

    # The site's settings page: its home area (four edges) and its time zone.
    panel.open("/sites/crater-district")
    panel.submit(panel.find("a[href='/sites/crater-district/settings']"))
    assert panel.heading() == "Home area and time zone of Crater District"
    panel.assert_accessible("site settings page")
    panel.submit_form("#site-settings-form", north="43.0", south="42.86", east="-122.0", west="-122.2", timeZone="Atlantis/Capital")
    assert "Enter a time zone this server knows" in panel.text("#site-settings-form")
    assert store.row("SELECT timeZone, homeNorth FROM site WHERE id = ?", site["id"]) == {"timeZone": "UTC", "homeNorth": None}
    panel.assert_accessible("site settings page, refused")
    panel.submit_form("#site-settings-form", timeZone="America/Los_Angeles")
    assert panel.notice() == "Settings saved."
    stored = store.row("SELECT homeNorth, homeSouth, homeEast, homeWest, timeZone FROM site WHERE id = ?", site["id"])
    assert stored == {"homeNorth": 43.0, "homeSouth": 42.86, "homeEast": -122.0, "homeWest": -122.2, "timeZone": "America/Los_Angeles"}

    # A new tour's map opens over the home area, not over the demo park.
    tour = api.create_tour("crater-district", "Rim Walk")
    panel.open(f"/tours/{tour['id']}")
    panel.wait_map_idle()
    lat, lng = map_centre(panel)
    assert lat == pytest.approx(42.93, abs=0.01) and lng == pytest.approx(-122.1, abs=0.01), (lat, lng)
    bounds = panel.driver.execute_script("const b = document.getElementById('tour-map').leafletMap.getBounds(); return [b.getNorth(), b.getSouth()]")
    assert bounds[0] >= 42.99 and bounds[1] <= 42.87, "the whole home area is in view"

    # The place search moves the map to a typed "latitude, longitude"; a name needs map data this server has not (no
    # --osm-extract), and the message says what to type instead.
    search = panel.visible("input[data-place-search]")
    panel.fill(search, "the lake")
    search.send_keys(Keys.ENTER)
    panel.wait().until(lambda d: "Type a latitude and a longitude" in panel.text("#place-search-message"))
    assert search.get_attribute("aria-invalid") == "true" and panel.focused() == search
    panel.fill(search, "42.9446, -122.1090")
    search.send_keys(Keys.ENTER)
    panel.wait().until(lambda d: map_centre(panel)[0] == pytest.approx(42.9446, abs=1e-4)
                       and map_centre(panel)[1] == pytest.approx(-122.1090, abs=1e-4))
    assert panel.text("#place-search-message") == "The map is over 42.94460, -122.10900."
    assert search.get_attribute("aria-invalid") is None
    panel.assert_accessible("tour page after a place search")


def test_a_four_stop_tour_in_clicks_fields_and_page_loads(ranger_panel, e2e_site, store, tmp_path):
    """The newcomer's four-stop tour, counted as test_first_hour counts (Enter on a form is a click; choosing a file is
    one): a new tour, its frame typed, four stops each with its text written in the map's form (the first with a
    picture), the picture's alt text in the stop's panel, and the submission. The stops cost no page load."""
    from test_first_hour import Tally

    panel = ranger_panel
    panel.open(f"/sites/{e2e_site}")
    tally = Tally(panel)
    panel.submit(panel.find(f"a[href='/sites/{e2e_site}/tours/new']")); tally.clicks += 1; tally.count_load()
    panel.fill(panel.find("input[name='name']"), "Four Springs Walk"); tally.fields += 1
    panel.fill(panel.find("textarea[name='description']"), "Four springs in an afternoon."); tally.fields += 1
    panel.submit(panel.find("main form button[type=submit]")); tally.clicks += 1; tally.count_load()
    tour_id = int(panel.path().split("/")[2])
    for key, value in {"north": "44.43", "south": "44.36", "east": "-122.0", "west": "-122.2"}.items():
        panel.fill(panel.find(f"#{key}"), value); tally.fields += 1
    panel.submit(panel.find("#frame-form button[type=submit]")); tally.clicks += 1; tally.count_load()

    loads_before = tally.loads
    (tmp_path / "first-spring.png").write_bytes(png_bytes())
    stops = [("Upper Spring", 0.2, 0.3), ("Mossy Spring", 0.4, 0.7), ("Cold Spring", 0.6, 0.3), ("Lower Spring", 0.8, 0.7)]
    for number, (name, fx, fy) in enumerate(stops, 1):
        panel.click_map_at(*frame_point(panel, fx, fy)); tally.clicks += 1
        form = panel.visible("#tour-map form[data-new-waypoint]")
        panel.fill(form.find_element(By.NAME, "name"), name); tally.fields += 1
        panel.fill(form.find_element(By.NAME, "description"), f"What {name} tells the walker."); tally.fields += 1
        if number == 1:
            form.find_element(By.CSS_SELECTOR, "input[type='file']").send_keys(str(tmp_path / "first-spring.png")); tally.clicks += 1
        form.find_element(By.CSS_SELECTOR, "button[type='submit']").click(); tally.clicks += 1
        panel.wait().until(lambda d: len(panel.waypoint_rows()) == number)
        tally.count_load()
    first = store.waypoints(tour_id)[0]
    panel.wait(60).until(lambda d: [a["scanStatus"] for a in store.assets(first["id"])] == ["clean"])
    image = store.assets(first["id"])[0]

    # The picture's alt text, in the first stop's panel beside the map.
    panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
    panel.find(f"#tour-map [data-waypoint-id='{first['id']}']").click(); tally.clicks += 1
    panel.wait().until(lambda d: editor_name(panel) == "Upper Spring")
    panel.fill(panel.find(f"fieldset[data-asset-id='{image['id']}'] textarea[name='altText']"), "A spring under ferns."); tally.fields += 1
    panel.find("form[data-edit-waypoint] button[type='submit']").click(); tally.clicks += 1
    panel.wait().until(lambda d: store.assets(first["id"])[0]["altText"] == "A spring under ferns.")
    tally.count_load()
    stop_loads = tally.loads - loads_before
    assert stop_loads == 0, "building the four stops loaded a page"
    assert [(w["name"], w["description"]) for w in store.waypoints(tour_id)] == [(n, f"What {n} tells the walker.") for n, _, _ in stops]

    # The publishing card the page re-read offers the submission: no reload to find the button.
    submit = panel.find(f"[data-publishing] form[action='/tours/{tour_id}/publish'] button[type=submit]")
    panel.submit(submit); tally.clicks += 1; tally.count_load()
    assert store.tour(tour_id)["state"] != "draft", "the tour was submitted"

    print(f"\n[four stops] clicks: {tally.clicks}, typed fields: {tally.fields}, full page loads: {tally.loads} "
          f"(of which for the four stops: {stop_loads})")
    assert tally.loads <= 4, f"{tally.loads} page loads"
