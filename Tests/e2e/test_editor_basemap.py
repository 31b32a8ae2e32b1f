"""The panel maps' basemap and the frame typed by hand.

The basemap is OpenStreetMap's standard tiles unless `--editor-tile-url` says otherwise (`none`: no basemap), and the
package tile server (`--tile-url`) serves both when set. There is no network here: the tests read the tile layer's
URL template and the tiles' `src`, never the tiles themselves (an image that fails to load is fine).

A typed frame fits the map; a tiny or thin one asks before saving; one over the limit is refused with no request."""
from __future__ import annotations

import re
import secrets
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading

import pytest

from support import Api, Panel, Server, chrome, console_errors, wait_for

OSM = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
SANTIAM = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}


class TileServer:
    """A loopback tile server answering any tile with a 1×1 PNG, counting requests."""

    PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d6c5d40000000049454e44ae426082")

    def __init__(self):
        requests = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(TileServer.PNG)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(TileServer.PNG)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def start(tmp_path_factory, name, *args) -> tuple[Server, Panel, Api, object]:
    server = Server(tmp_path_factory.mktemp(name), demo=False, extra_args=args)
    server.start()
    password = "basemap-" + secrets.token_urlsafe(10)
    server.cli("user", "create", "--email", "mapper@trail.local", "--name", "Mapper", "--password", password, "--admin")
    server.cli("site", "create", "--slug", "maps", "--name", "Map Park")
    api = Api(server.base_url, server.create_token("mapper@trail.local", "basemap"))
    driver = chrome()
    panel = Panel(driver, server)
    panel.sign_in("mapper@trail.local", password)
    assert panel.path() == "/sites", f"signing in led to {panel.path()}"
    return server, panel, api, driver


def tile_layers(panel) -> list[dict]:
    return panel.driver.execute_script("""
        const layers = [];
        document.getElementById('tour-map').leafletMap.eachLayer((l) => { if (l._url) layers.push({url: l._url}); });
        return layers;""")


def tile_sources(panel) -> list[str]:
    wait_for("tiles on the map", lambda: panel.all("#tour-map img.leaflet-tile"), timeout=10)
    return [img.get_attribute("src") for img in panel.all("#tour-map img.leaflet-tile")]


def csp_img_src(server, path, panel) -> str:
    return panel.driver.execute_script(
        "return fetch(arguments[0]).then((r) => r.headers.get('content-security-policy'))", server.base_url + path)


def test_the_default_basemap_is_openstreetmap_from_the_first_view_of_a_new_tour(tmp_path_factory):
    server, panel, api, driver = start(tmp_path_factory, "basemap-default")
    try:
        tour = api.create_tour("maps", "No Frame Yet")
        panel.open(f"/tours/{tour['id']}")
        assert [layer["url"] for layer in tile_layers(panel)] == [OSM]
        sources = tile_sources(panel)
        assert sources and all(re.fullmatch(r"https://tile\.openstreetmap\.org/(\d+)/\d+/\d+\.png", s) for s in sources), sources
        zoom = panel.driver.execute_script("return document.getElementById('tour-map').leafletMap.getZoom()")
        assert zoom >= 10, f"a new tour opens at zoom {zoom}"
        assert all(int(s.split("/")[3]) == round(zoom) for s in sources)
        credit = panel.find("#tour-map .leaflet-control-attribution a[href='https://www.openstreetmap.org/copyright']")
        assert credit.text == "© OpenStreetMap contributors"
        csp = csp_img_src(server, f"/tours/{tour['id']}", panel)
        img_src = next(d for d in csp.split(";") if d.strip().startswith("img-src")).split()
        assert img_src == ["img-src", "'self'", "data:", "blob:", "https://tile.openstreetmap.org"]

        # Framing the visible area at a continent's scale is refused before anything is sent.
        panel.driver.execute_script("document.getElementById('tour-map').leafletMap.setZoom(5, {animate: false})")
        panel.find("#tour-map .leaflet-top.leaflet-right button").click()
        assert "over the 2,500 km² limit" in panel.find("#frame-message").text
        assert all(panel.find(f"#{k}").get_attribute("value") == "" for k in ("north", "south", "east", "west"))
        assert api.tour(tour["id"]).get("frame") is None
        assert not console_errors(driver), "no script error (a tile that cannot load is not one)"
    finally:
        driver.quit()
        server.stop()


def test_none_turns_the_basemap_off(tmp_path_factory):
    server, panel, api, driver = start(tmp_path_factory, "basemap-none", "--editor-tile-url", "none")
    try:
        tour = api.create_tour("maps", "Plain", frame=SANTIAM)
        panel.open(f"/tours/{tour['id']}")
        assert tile_layers(panel) == []
        assert not panel.all("#tour-map img.leaflet-tile")
        csp = csp_img_src(server, f"/tours/{tour['id']}", panel)
        assert "img-src 'self' data: blob:;" in csp, csp
        assert not console_errors(driver), "no script error (a tile that cannot load is not one)"
    finally:
        driver.quit()
        server.stop()


def test_the_package_tile_server_serves_the_panel_maps_too(tmp_path_factory):
    tiles = TileServer()
    template = tiles.url + "/{z}/{x}/{y}.png"
    server, panel, api, driver = start(tmp_path_factory, "basemap-tile-url", "--tile-url", template, "--tile-allow-private")
    try:
        tour = api.create_tour("maps", "Own Tiles", frame=SANTIAM)
        panel.open(f"/tours/{tour['id']}")
        assert [layer["url"] for layer in tile_layers(panel)] == [template]
        assert all(s.startswith(tiles.url + "/") for s in tile_sources(panel))
        wait_for("the browser asked the loopback tile server", lambda: tiles.requests, timeout=10)
        csp = csp_img_src(server, f"/tours/{tour['id']}", panel)
        assert f"img-src 'self' data: blob: {tiles.url};" in csp and "openstreetmap" not in csp, csp
        assert not console_errors(driver), "no script error (a tile that cannot load is not one)"
    finally:
        driver.quit()
        server.stop()
        tiles.close()
