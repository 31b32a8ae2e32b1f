"""The ranger's first hour, measured: a new tour framed by typing, three waypoints placed by clicking the map, an
image with alt text, submitted for review. The test counts the clicks (Enter on a form counts as one), the typed
fields and the full page loads, prints them (BENCHMARKS.md keeps them), and holds the path to its promises: no page
load for the three waypoints, at most 20 clicks in all."""
from __future__ import annotations

from selenium.webdriver.common.keys import Keys

from support import png_bytes
from test_upload import wait_statuses

FRAME = {"north": "44.43", "south": "44.36", "east": "-122.0", "west": "-122.2"}


class Tally:
    def __init__(self, panel):
        self.panel, self.clicks, self.fields, self.loads = panel, 0, 0, 0
        self.mark()

    def mark(self):
        self.panel.driver.execute_script("window.__marker = 1")

    def count_load(self) -> bool:
        """Counts a full page load since the last look (the marker a page load wipes out) and marks the new page."""
        reloaded = self.panel.driver.execute_script("return window.__marker !== 1")
        if reloaded:
            self.loads += 1
            self.mark()
        return reloaded


def test_the_rangers_first_hour_in_clicks_fields_and_page_loads(admin_panel, e2e_site, store, tmp_path):
    panel = admin_panel
    panel.open(f"/sites/{e2e_site}")
    tally = Tally(panel)

    # A new tour: its name and a description.
    panel.submit(panel.find(f"a[href='/sites/{e2e_site}/tours/new']")); tally.clicks += 1; tally.count_load()
    panel.fill(panel.find("input[name='name']"), "Lost Lake Trail"); tally.fields += 1
    panel.fill(panel.find("textarea[name='description']"), "Around the lake and up to the lava beds."); tally.fields += 1
    panel.submit(panel.find("main form button[type=submit]")); tally.clicks += 1; tally.count_load()
    tour_id = int(panel.path().split("/")[2])

    # The frame, typed: the map follows; saved with one click.
    for key, value in FRAME.items():
        panel.fill(panel.find(f"#{key}"), value); tally.fields += 1
    panel.submit(panel.find("#frame-form button[type=submit]")); tally.clicks += 1; tally.count_load()
    assert panel.notice() == "Frame saved."

    # Three waypoints by clicking the map: a name and Enter each, no page load.
    loads_before = tally.loads
    for number, (name, fx, fy) in enumerate([("Trailhead", 0.2, 0.7), ("Lava Beds", 0.5, 0.4), ("Lake Shore", 0.8, 0.6)], 1):
        panel.driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
        panel.wait_map_idle()
        nw = panel.center(panel.find(".frame-handle-nw"))
        se = panel.center(panel.find(".frame-handle-se"))
        panel.click_map_at(nw[0] + fx * (se[0] - nw[0]), nw[1] + fy * (se[1] - nw[1])); tally.clicks += 1
        panel.visible("#tour-map form[data-new-waypoint] input[name='name']")
        panel.press(name, Keys.ENTER); tally.fields += 1; tally.clicks += 1
        panel.wait().until(lambda d: len(panel.waypoint_rows()) == number)
        tally.count_load()
    waypoint_loads = tally.loads - loads_before
    assert waypoint_loads == 0, "placing the three waypoints loaded a page"
    assert [w["name"] for w in store.waypoints(tour_id)] == ["Trailhead", "Lava Beds", "Lake Shore"]

    # An image with alt text at the first waypoint.
    first = store.waypoints(tour_id)[0]
    panel.submit(panel.find(f"#waypoint-{first['id']} a.waypoint-name")); tally.clicks += 1; tally.count_load()
    (tmp_path / "lost-lake.png").write_bytes(png_bytes())
    panel.find("#upload-files").send_keys(str(tmp_path / "lost-lake.png")); tally.clicks += 1  # choosing the file
    wait_statuses(panel, {"lost-lake.png": "clean"})
    tally.count_load()  # the asset list may reload itself while the file is scanned
    image = next(a["id"] for a in store.assets(first["id"]) if a["originalName"] == "lost-lake.png")
    panel.fill(panel.find(f"#asset-{image} form.asset-describe [name='altText']"), "Lost Lake under Mount Washington."); tally.fields += 1
    panel.submit(panel.find(f"#asset-{image} form.asset-describe button[type=submit]")); tally.clicks += 1; tally.count_load()

    # Back to the tour, and submit it for review.
    panel.submit(panel.find(f"a[href='/tours/{tour_id}']")); tally.clicks += 1; tally.count_load()
    panel.submit(panel.find(f"form[action='/tours/{tour_id}/publish'] button[type=submit]")); tally.clicks += 1; tally.count_load()
    assert store.tour(tour_id)["state"] != "draft", "the tour was submitted"

    print(f"\n[first hour] clicks: {tally.clicks}, typed fields: {tally.fields}, full page loads: {tally.loads} "
          f"(of which for the three waypoints: {waypoint_loads})")
    assert tally.clicks <= 20, f"{tally.clicks} clicks"
