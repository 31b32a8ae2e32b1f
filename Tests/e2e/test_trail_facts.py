"""Trail facts in Chromium, from a server started with `--dem`: a terrain model made here with GDAL's gdal_translate
(a plane, so the heights are known). A GPX track without heights is imported, and the heights come from the model.
The tour page shows the elevation profile, its table and the totals in words, and takes the ranger's accessibility
fields. The visitor player shows the same from the signed manifest, online and offline with the server stopped, and
marks where the visitor is on the profile while it follows their position. axe checks both pages.

This module runs its own server (its own data folder, the --dem flag), since it stops and restarts it."""
from __future__ import annotations

import json
import subprocess

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import Api, Panel, Server, chrome, png_bytes, set_viewport, wait_for, write_signatures
from test_visitor_player import PASSWORD, public, release, start_visit_server, wait_state

FRAME = {"north": 44.404, "south": 44.396, "east": -122.044, "west": -122.056}
STOPS = [("Trailhead", 44.3990, -122.0540), ("Overlook", 44.4025, -122.0465)]


def height(longitude: float, latitude: float) -> float:
    """The model: 500 m at its south-west corner, rising 3000 m per degree east and 2000 m per degree north."""
    return 500 + 3000 * (longitude + 122.06) + 2000 * (latitude - 44.39)


def write_dem(folder) -> str:
    """A 1 arc-second GeoTIFF over lon −122.06…−122.04, lat 44.39…44.41, written by GDAL from an ASCII grid."""
    cell = 1 / 3600
    columns = rows = 72
    lines = [f"ncols {columns}", f"nrows {rows}", "xllcorner -122.06", "yllcorner 44.39", f"cellsize {cell}", "NODATA_value -9999"]
    for row in range(rows):
        y = 44.39 + (rows - row - 0.5) * cell
        lines.append(" ".join(f"{height(-122.06 + (column + 0.5) * cell, y):.3f}" for column in range(columns)))
    grid = folder / "plane.asc"
    grid.write_text("\n".join(lines) + "\n")
    dem = folder / "plane.tif"
    subprocess.run(["gdal_translate", "-q", "-a_srs", "EPSG:4326", "-ot", "Float32", str(grid), str(dem)], check=True)
    return str(dem)


GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="e2e" xmlns="http://www.topografix.com/GPX/1/1">
<wpt lat="44.3990" lon="-122.0540"><name>Trailhead</name><desc>Where the walk starts.</desc></wpt>
<wpt lat="44.4025" lon="-122.0465"><name>Overlook</name><desc>The falls below.</desc></wpt>
<trk><name>Falls climb</name><trkseg>
<trkpt lat="44.3990" lon="-122.0540"></trkpt><trkpt lat="44.4000" lon="-122.0500"></trkpt><trkpt lat="44.4025" lon="-122.0465"></trkpt>
</trkseg></trk>
</gpx>
"""


@pytest.fixture(scope="module")
def facts_server(tmp_path_factory):
    dem = write_dem(tmp_path_factory.mktemp("facts-dem"))
    data = tmp_path_factory.mktemp("facts-data")
    server = Server(data, demo=False, extra_args=("--clamav-db", str(write_signatures(tmp_path_factory.mktemp("facts-clamav"))), "--dem", dem))
    try:
        yield start_visit_server(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tour(facts_server):
    author = Api(facts_server.base_url, facts_server.create_token("ranger@falls.test"))
    created = author.create_tour("falls", "Falls Climb", frame=FRAME, description="Up to the overlook.")
    author.import_file(created["id"], "falls.gpx", GPX.encode())
    stops = author.tour(created["id"])["waypoints"]
    picture = author.upload(created["id"], stops[1]["id"], "falls.png", png_bytes())
    assert author.scanned_asset(picture["id"])["scanStatus"] == "clean"
    return author.tour(created["id"])


@pytest.fixture
def browser(facts_server):
    driver = chrome()
    try:
        yield Panel(driver, facts_server)
    finally:
        driver.quit()


def test_the_tour_page_shows_the_profile_and_takes_accessibility(facts_server, tour, browser):
    trail = tour["trail"]
    assert trail["elevationSource"] == "dem", trail
    # The track climbs all the way: the plane's height at its end less its start, to a few centimetres.
    assert abs(trail["ascentMeters"] - (height(-122.0465, 44.4025) - height(-122.0540, 44.3990))) < 0.5, trail

    panel = browser
    panel.sign_in("ranger@falls.test", PASSWORD)
    panel.open(f"/tours/{tour['id']}")
    assert panel.visible("svg[data-elevation-profile]").get_attribute("role") == "img"
    assert "m up and 0 m down" in panel.text("[data-trail-facts]")
    rows = [row.text for row in panel.all("table[data-elevation-table] tbody tr")]
    assert any(row.startswith("Stop 1: Trailhead") for row in rows) and any(row.startswith("Stop 2: Overlook") for row in rows), rows
    assert "Gentle" in panel.text("table[data-grade-table]")
    panel.assert_accessible("tour page with trail facts")

    form = panel.find("form[data-accessibility-form]")
    Select(form.find_element(By.NAME, "surface")).select_by_value("boardwalk")
    panel.fill(form.find_element(By.NAME, "minWidthCm"), "120")
    form.find_element(By.ID, "access-step-yes").click()
    panel.fill(form.find_element(By.NAME, "notes"), "A bench at the overlook.")
    panel.submit(form.find_element(By.CSS_SELECTOR, "[type=submit]"))
    assert panel.notice() == "Accessibility saved."
    shown = panel.text("[data-accessibility]")
    assert "Surface: boardwalk." in shown and "Narrowest width: 120 cm." in shown and "Step-free: no steps anywhere." in shown

    # A width that is no width: the field says why, and nothing is stored.
    form = panel.find("form[data-accessibility-form]")
    panel.fill(form.find_element(By.NAME, "minWidthCm"), "3")
    panel.submit(form.find_element(By.CSS_SELECTOR, "[type=submit]"))
    assert "from 10 to 5000" in panel.text("#access-width-error")
    assert Api(facts_server.base_url, facts_server.create_token("ranger@falls.test")).tour(tour["id"])["trail"]["accessibility"]["minWidthCm"] == 120
    panel.assert_accessible("trail facts form with an error")


def test_the_player_shows_the_profile_offline_and_marks_the_visitor(facts_server, tour, browser):
    author = Api(facts_server.base_url, facts_server.create_token("ranger@falls.test"))
    reviewer = Api(facts_server.base_url, facts_server.create_token("reviewer@falls.test"))
    release(author, reviewer, tour["id"])
    catalog = json.loads(public(facts_server, "/api/v1/catalog")[0])
    package = next(p["id"] for p in catalog["packages"] if p["name"] == "Falls Climb")
    panel, driver = browser, browser.driver
    set_viewport(driver, 390, 844, mobile=True)
    panel.open(f"/visit/{package}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    assert panel.visible("#trail-facts svg[data-elevation-profile]")
    assert "m up" in panel.text("#trail-facts [data-trail-facts]")
    assert len(panel.all("#trail-facts table[data-elevation-table] tbody tr")) >= 11
    panel.assert_accessible("player with trail facts", media=False)

    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)
    facts_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        assert panel.visible("#trail-facts svg[data-elevation-profile]")
        assert "Surface: boardwalk." in panel.text("#trail-facts [data-accessibility]")
        # Half way up the track: the dot on the profile sits at the distance the visitor has come.
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": facts_server.base_url, "permissions": ["geolocation"]})
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": 44.4000, "longitude": -122.0500, "accuracy": 5})
        panel.find("[data-action='start']").click()
        marker = panel.wait(30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-profile-position]"))[0]
        along = int(marker.get_attribute("data-distance"))
        assert 300 < along < 400, along  # the first leg of the track is about 340 m
        panel.assert_accessible("player offline, following the visitor", media=False)
    finally:
        facts_server.start()
