"""Pictures of the main pages for the README, as a ranger sees them, written under .build/screenshots/ on every run
(scripts/screenshots.sh writes them to docs/screenshots/)
(1440 px wide, the whole page; one phone-sized picture of the tour page)."""
from support import SCREENSHOTS, reset_viewport, set_viewport

PNG = b"\x89PNG\r\n\x1a\n"


def demo_tour(api) -> dict:
    # The list answers summaries, a page at a time: find the tour by name, then read it whole (with its waypoints).
    listed = next(t for t in api.get("/manage/tours?site=sweet-home&q=Santiam+Wagon+Road")["tours"] if t["name"] == "Santiam Wagon Road")
    return api.get(f"/manage/tours/{listed['id']}")


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG), f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_screenshots_of_the_main_pages(ranger_panel, api):
    panel = ranger_panel
    tour = demo_tour(api)
    set_viewport(panel.driver, 1440, 1000)
    written = []

    panel.open("/sites/sweet-home")
    assert "Santiam Wagon Road" in panel.text("main table")
    # The "Updated" column holds this run's start time: pin it, so the picture changes only when the page does.
    pinned = panel.driver.execute_script("""
        let n = 0;
        for (const td of document.querySelectorAll('main table tbody td.small')) {
            if (/^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$/.test(td.textContent.trim())) { td.textContent = '2026-06-01 09:00 UTC'; n++; }
        }
        return n;""")
    assert pinned == len(panel.all("main table tbody tr")) >= 1
    written.append(panel.screenshot("tour-list"))

    panel.open(f"/tours/{tour['id']}")
    panel.wait_map_rendered()
    assert len(panel.all("#tour-map .waypoint-marker")) == len(tour["waypoints"]) >= 5
    written.append(panel.screenshot("tour-editor"))

    waypoint = tour["waypoints"][0]
    panel.open(f"/tours/{tour['id']}/waypoints/{waypoint['id']}")
    panel.wait_map_rendered()
    assert panel.heading() == waypoint["name"]
    written.append(panel.screenshot("waypoint"))

    # A Spanish version of the first stop, on its language tab (the tour goes back to English only afterwards).
    api.patch(f"/manage/tours/{tour['id']}", {"languages": ["en", "es"]})
    api.patch(f"/manage/tours/{tour['id']}/waypoints/{waypoint['id']}",
              {"localized": {"es": {"name": "Inicio del camino", "description": "El camino de carretas empieza aquí, junto al río Santiam."}}})
    try:
        panel.open(f"/tours/{tour['id']}/waypoints/{waypoint['id']}?lang=es")
        panel.wait_map_rendered()
        assert panel.find(".language-tabs a[aria-current='page']").text == "Spanish (Español)"
        written.append(panel.screenshot("language-tabs"))
    finally:
        api.patch(f"/manage/tours/{tour['id']}", {"languages": ["en"], "confirmLanguageRemoval": True})

    set_viewport(panel.driver, 375, 812, mobile=True)
    panel.open(f"/tours/{tour['id']}")
    panel.wait_map_rendered()
    written.append(panel.screenshot("tour-editor-phone"))
    reset_viewport(panel.driver)

    for path in written:
        width, height = png_size(path)
        expected_width = 375 if path.stem.endswith("-phone") else 1440
        assert width == expected_width and height >= 600, f"{path.name} is {width}×{height}"
    assert {p.name for p in written} <= {p.name for p in SCREENSHOTS.glob("*.png")}
