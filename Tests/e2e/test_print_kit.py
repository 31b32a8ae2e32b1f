"""The print kit's stop codes, followed by a phone: the booklet of a published tour is fetched as a ranger would print
it, its QR codes are read back from 150 dpi rasters with ZBar, and each stop's link opens the player with that stop
open, online and, once the tour is saved, with the server gone.

This module runs its own server (its own data folder and port), since it stops and restarts it; the page's origin stays
the same across the restart, so the service worker and the saved copy are found again. The server's public address is
loopback here, so the booklet is a proof (`?draft=1`): its codes lead to this server, which is what the browser opens."""
from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest

from support import Api, Panel, Server, chrome, set_viewport, wait_for, write_signatures

FRAME = {"north": 44.404, "south": 44.396, "east": -122.044, "west": -122.056}
STOPS = [("Trailhead", 44.3990, -122.0520), ("Fern Hollow", 44.4005, -122.0495), ("Falls Overlook", 44.4025, -122.0465)]
PASSWORD = "print-test-password-1"


@pytest.fixture(scope="module")
def print_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("print-data")
    server = Server(data, demo=False, extra_args=("--clamav-db", str(write_signatures(tmp_path_factory.mktemp("print-clamav")))))
    try:
        server.start()
        server.cli("site", "create", "--slug", "ridge", "--name", "Ridge District")
        for email, role in (("ranger@ridge.test", "manager"), ("reviewer@ridge.test", "reviewer")):
            server.cli("user", "create", "--email", email, "--name", email.split("@")[0].title(), "--password", PASSWORD)
            server.cli("member", "add", "--site", "ridge", "--email", email, "--role", role)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def published(print_server):
    author = Api(print_server.base_url, print_server.create_token("ranger@ridge.test"))
    reviewer = Api(print_server.base_url, print_server.create_token("reviewer@ridge.test"))
    tour = author.create_tour("ridge", "Fern Falls Walk", frame=FRAME, description="Three stops to the falls.")
    for name, latitude, longitude in STOPS:
        author.post(f"/manage/tours/{tour['id']}/waypoints",
                    {"name": name, "latitude": latitude, "longitude": longitude, "description": f"About {name}."})
    request_id = author.post(f"/manage/tours/{tour['id']}/publish", {})["requestId"]
    wait_for("the package build", lambda: author.get(f"/manage/publish-requests/{request_id}")["state"] not in ("building", "draft"),
             timeout=180)
    reviewer.post(f"/manage/publish-requests/{request_id}/approve", {"comment": "Fine."})
    author.post(f"/manage/publish-requests/{request_id}/push", {})
    with urllib.request.urlopen(f"{print_server.base_url}/api/v1/catalog", timeout=30) as response:
        catalog = json.loads(response.read())
    package = next(p["id"] for p in catalog["packages"] if p["name"] == "Fern Falls Walk")
    return {"tour": tour, "package": package, "author": author}


def booklet_codes(server: Server, author: Api, tour_id: int, folder) -> list[str]:
    """The booklet as a ranger prints it (a proof: this server's address is loopback), every QR code read with ZBar."""
    request = urllib.request.Request(f"{server.base_url}/api/v1/manage/tours/{tour_id}/print/booklet.pdf?draft=1")
    request.add_header("Authorization", f"Bearer {author.token}")
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.headers["Content-Type"] == "application/pdf"
        (folder / "booklet.pdf").write_bytes(response.read())
    subprocess.run(["pdftoppm", "-r", "150", "-gray", "-png", str(folder / "booklet.pdf"), str(folder / "page")], check=True, timeout=120)
    codes = []
    for page in sorted(folder.glob("page*.png")):
        out = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(page)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"no code read on {page.name}: {out.stderr}"
        codes += [line for line in out.stdout.splitlines() if line]
    return codes


def wait_state(panel: Panel, *wanted: str, timeout: float = 60) -> str:
    panel.wait(timeout).until(lambda d: d.execute_script("return document.getElementById('player')?.dataset.offlineState") in wanted)
    return panel.find("#player").get_attribute("data-offline-state")


def expect_open(panel: Panel, order: int) -> None:
    """The linked stop is open (its body shown, its button expanded) and no other is."""
    panel.wait(30).until(lambda d: d.find_elements("css selector", f"[data-stop-order='{order}'][data-linked='true']"))
    panel.wait(15).until(lambda d: d.find_element("css selector", f"[data-stop-order='{order}'] .visit-stop-body").is_displayed())
    assert f"About {STOPS[order - 1][0]}." in panel.text(f"[data-stop-order='{order}']")
    for item in panel.all("[data-stop]"):
        expanded = item.find_element("css selector", ".visit-stop-open").get_attribute("aria-expanded")
        assert expanded == ("true" if item.get_attribute("data-stop-order") == str(order) else "false")


def test_each_printed_stop_code_opens_its_stop_online_and_offline(print_server, published, tmp_path):
    codes = booklet_codes(print_server, published["author"], published["tour"]["id"], tmp_path)
    player = f"{print_server.base_url}/visit/{published['package']}"
    stop_links = {int(code.rsplit("=", 1)[1]): code for code in codes if "?stop=" in code}
    assert player in codes, codes
    assert stop_links == {order: f"{player}?stop={order}" for order in (1, 2, 3)}, codes

    driver = chrome()
    set_viewport(driver, 390, 844, mobile=True)
    panel = Panel(driver, print_server)
    try:
        # Online, nothing saved: the decoded link of stop 2 opens the player with stop 2 open.
        driver.get(stop_links[2])
        assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
        expect_open(panel, 2)
        panel.assert_accessible("player opened at a stop from a printed code", media=False)

        # Saved for offline use, then the server goes away: stop 3's link still opens stop 3, from the saved copy.
        panel.find("[data-action='save-offline']").click()
        assert wait_state(panel, "ready", "failed", timeout=120) == "ready", panel.text("#offline-error")
        wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"),
                 timeout=30)
        print_server.stop()
        try:
            driver.get(stop_links[3])
            assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
            expect_open(panel, 3)
            # A link to a stop the tour does not have opens the tour and says so.
            driver.get(f"{player}?stop=9")
            assert wait_state(panel, "ready", "failed") == "ready"
            panel.wait(15).until(lambda d: "no stop 9" in d.find_element("css selector", "#location-status").text)
            assert not panel.all("[data-linked]")
        finally:
            print_server.start()
    finally:
        driver.quit()
