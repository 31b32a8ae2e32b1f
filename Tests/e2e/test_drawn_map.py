"""The map drawn from open data, in Chromium, from a server started with `--osm-extract` (an extract written here as
OSM XML and turned into .osm.pbf by osmium) and `--dem` (the plane of test_trail_facts), and with the editor's online
tiles off (`--editor-tile-url none`), as on an agency network that blocks tile servers.

The visitor player draws the package's map beneath the route with OpenStreetMap's credit, online and offline with the
server stopped; the tour page draws the same map for its frame, and its place search finds a name of the extract. axe
checks the pages.

This module runs its own server (its own data folder and flags), since it stops and restarts it."""
from __future__ import annotations

import json
import subprocess

import pytest
from selenium.webdriver.common.by import By

from support import Api, Panel, Server, chrome, png_bytes, set_viewport, wait_for, write_signatures
from test_trail_facts import FRAME, write_dem
from test_visitor_player import PASSWORD, public, release, start_visit_server, wait_state

OSM = """<?xml version='1.0' encoding='UTF-8'?>
<osm version="0.6" generator="e2e">
 <node id="1" version="1" lat="44.4010" lon="-122.0480"><tag k="natural" v="peak"/><tag k="name" v="Tamolitch Point"/><tag k="ele" v="640"/></node>
 <node id="2" version="1" lat="44.3970" lon="-122.0550"><tag k="amenity" v="parking"/><tag k="name" v="Falls Trailhead Parking"/></node>
 <node id="10" version="1" lat="44.3990" lon="-122.0600"/>
 <node id="11" version="1" lat="44.4000" lon="-122.0500"/>
 <node id="12" version="1" lat="44.4030" lon="-122.0400"/>
 <node id="20" version="1" lat="44.4015" lon="-122.0530"/>
 <node id="21" version="1" lat="44.4015" lon="-122.0510"/>
 <node id="22" version="1" lat="44.4025" lon="-122.0510"/>
 <node id="23" version="1" lat="44.4025" lon="-122.0530"/>
 <way id="100" version="1"><nd ref="10"/><nd ref="11"/><nd ref="12"/><tag k="highway" v="path"/><tag k="name" v="McKenzie River Trail"/></way>
 <way id="101" version="1"><nd ref="20"/><nd ref="21"/><nd ref="22"/><nd ref="23"/><nd ref="20"/><tag k="natural" v="water"/><tag k="name" v="Blue Pool"/></way>
</osm>
"""

STOPS = [("Trailhead", 44.3990, -122.0540), ("Blue Pool", 44.4020, -122.0520)]


@pytest.fixture(scope="module")
def map_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("map-osm")
    xml = folder / "region.osm"
    xml.write_text(OSM)
    extract = folder / "region.osm.pbf"
    subprocess.run(["osmium", "sort", "--overwrite", "-o", str(extract), str(xml)], check=True)
    dem = write_dem(tmp_path_factory.mktemp("map-dem"))
    data = tmp_path_factory.mktemp("map-data")
    server = Server(data, demo=False, extra_args=(
        "--clamav-db", str(write_signatures(tmp_path_factory.mktemp("map-clamav"))),
        "--osm-extract", str(extract), "--dem", dem, "--editor-tile-url", "none",
    ))
    try:
        yield start_visit_server(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tour(map_server):
    author = Api(map_server.base_url, map_server.create_token("ranger@falls.test"))
    created = author.create_tour("falls", "Blue Pool Walk", frame=FRAME, description="To the pool and back.")
    for name, latitude, longitude in STOPS:
        author.post(f"/manage/tours/{created['id']}/waypoints", {"name": name, "latitude": latitude, "longitude": longitude, "description": name})
    stops = author.tour(created["id"])["waypoints"]
    picture = author.upload(created["id"], stops[1]["id"], "pool.png", png_bytes())
    assert author.scanned_asset(picture["id"])["scanStatus"] == "clean"
    return author.tour(created["id"])


@pytest.fixture
def browser(map_server):
    driver = chrome()
    try:
        yield Panel(driver, map_server)
    finally:
        driver.quit()


def test_the_editor_draws_the_map_with_its_tiles_off_and_finds_places(map_server, tour, browser):
    panel = browser
    panel.sign_in("ranger@falls.test", PASSWORD)
    panel.open(f"/tours/{tour['id']}")
    panel.wait(30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tour-map[data-basemap='ready']"))
    assert "OpenStreetMap contributors" in panel.text("#tour-map .leaflet-control-attribution")
    # The publishing card says what visitors will get.
    assert panel.find("#visitor-map").get_attribute("data-visitor-map") == "drawn"
    panel.assert_accessible("tour page with the drawn map")

    search = panel.find("#place-search")
    panel.fill(search, "tamolitch")
    panel.find("#place-search-form button[type=submit]").click()
    wait_for("the map to move to the place", lambda: "Tamolitch Point" in panel.text("#place-search-message"), timeout=20)
    center = "const c = document.getElementById('tour-map').leafletMap.getCenter(); return [c.lat, c.lng];"
    # The map pans there (animated): centred on the place once it stands still.
    wait_for("the map to centre on the place", lambda: (lambda c: abs(c[0] - 44.4010) < 1e-4 and abs(c[1] + 122.0480) < 1e-4)(
        panel.driver.execute_script(center)), timeout=20)
    panel.fill(search, "Nowhere Special")
    panel.find("#place-search-form button[type=submit]").click()
    wait_for("the search to say it found nothing", lambda: "No place named like" in panel.text("#place-search-message"), timeout=20)
    assert search.get_attribute("aria-invalid") == "true"


def test_the_player_draws_the_map_offline_with_its_credit(map_server, tour, browser):
    author = Api(map_server.base_url, map_server.create_token("ranger@falls.test"))
    reviewer = Api(map_server.base_url, map_server.create_token("reviewer@falls.test"))
    release(author, reviewer, tour["id"])
    catalog = json.loads(public(map_server, "/api/v1/catalog")[0])
    package = next(p["id"] for p in catalog["packages"] if p["name"] == "Blue Pool Walk")
    manifest = json.loads(public(map_server, f"/api/v1/packages/{package}/versions/1/manifest")[0])
    assert manifest["basemap"]["path"] == "map/basemap.geojson" and "contour" in manifest["basemap"]["layers"], manifest["basemap"]

    panel, driver = browser, browser.driver
    set_viewport(driver, 390, 844, mobile=True)
    panel.open(f"/visit/{package}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    panel.wait(30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#visit-map[data-basemap='ready']"))
    assert "OpenStreetMap contributors" in panel.text("#visit-map .leaflet-control-attribution")
    panel.assert_accessible("player with the drawn map", media=False)

    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)
    map_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        panel.wait(30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#visit-map[data-basemap='ready']"))
        assert "OpenStreetMap contributors" in panel.text("#visit-map .leaflet-control-attribution")
        # Drawn on the canvas of its own pane, beneath the route's.
        assert driver.execute_script("return !!document.querySelector('#visit-map .leaflet-basemap-pane canvas')")
        # Few named points: their names stay on the map, as text.
        labels = driver.execute_script(
            "return [...document.querySelectorAll('#visit-map .visit-basemap-label')].map((label) => label.textContent)")
        assert sorted(labels) == ["Falls Trailhead Parking", "Tamolitch Point (640 m)"], labels
    finally:
        map_server.start()
