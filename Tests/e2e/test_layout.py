"""The panel on a phone in the field (375 px) and on a desk (1440 px): no sideways scrolling, the map and the
forms on screen, the menu reachable."""
import pytest
from selenium.webdriver.common.by import By

from support import reset_viewport, set_viewport

WIDTHS = [375, 1440]


def demo_tour(api) -> dict:
    # The list answers summaries, a page at a time: find the tour by name, then read it whole (with its waypoints).
    listed = next(t for t in api.get("/manage/tours?site=sweet-home&q=Santiam+Wagon+Road")["tours"] if t["name"] == "Santiam Wagon Road")
    return api.get(f"/manage/tours/{listed['id']}")


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def width(request, panel):
    w = request.param
    set_viewport(panel.driver, w, 812 if w == 375 else 1000, mobile=w < 768)
    return w


def assert_fits(panel, width, label):
    assert panel.driver.execute_script("return document.documentElement.clientWidth") == width
    overflow = panel.horizontal_overflow()
    culprits = panel.driver.execute_script("""
        const limit = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > limit + 0.5
            && !e.closest('.table-responsive, .leaflet-container')).slice(0, 5).map((e) => e.outerHTML.slice(0, 120));
    """) if overflow > 0 else []
    assert overflow <= 0, f"{label} at {width} px scrolls sideways by {overflow} px: {culprits}"


def assert_on_screen(panel, element, label):
    panel.driver.execute_script("arguments[0].scrollIntoView({block: 'start', behavior: 'instant'})", element)
    assert element.is_displayed(), f"{label} is hidden"
    assert panel.in_view_horizontally(element), f"{label} does not fit the width"


def test_tour_page_fits(ranger_panel, width, api):
    panel = ranger_panel
    tour = demo_tour(api)
    panel.open(f"/tours/{tour['id']}")
    assert_fits(panel, width, "the tour page")

    map_element = panel.find("#tour-map")
    assert_on_screen(panel, map_element, "the map")
    assert map_element.size["height"] >= 260 and map_element.size["width"] >= min(width - 40, 300)
    assert panel.all("#tour-map .leaflet-tile"), "the map has drawn its grid"
    assert panel.find(".frame-handle-nw").is_displayed() and len(panel.all("#tour-map .waypoint-marker")) == len(tour["waypoints"])
    for css, label in (("#frame-form", "the frame form"), ("#frame-form button[type=submit]", "Save frame"),
                       ("#waypoint-list", "the waypoint list"), ("#waypoint-form", "the waypoint form"),
                       ("#waypoint-form button[type=submit]", "Add waypoint")):
        assert_on_screen(panel, panel.find(css), label)
    for row in panel.all("#waypoint-list > li"):
        assert_on_screen(panel, row.find_element(By.CSS_SELECTOR, "button[aria-label$=' down']"), "a row's ↓ button")
    if width == 375:
        # Side by side on a desk, one under the other on a phone.
        assert panel.find("#frame-form").location["y"] > map_element.location["y"] + map_element.size["height"]
        panel.assert_accessible("tour page at 375 px")
    else:
        assert abs(panel.find("#frame-form").location["y"] - map_element.location["y"]) < 120
    assert_fits(panel, width, "the tour page after scrolling")


def test_other_pages_fit(ranger_panel, width, api):
    panel = ranger_panel
    tour = demo_tour(api)
    for path in ("/sites", "/sites/sweet-home", "/sites/sweet-home/tours/new", f"/tours/{tour['id']}/waypoints/{tour['waypoints'][0]['id']}",
                 "/sites/sweet-home/members", "/account/tokens", "/account/password"):
        panel.open(path)
        assert_fits(panel, width, path)
        assert panel.find("h1").is_displayed()


def test_admin_pages_fit(admin_panel, width):
    panel = admin_panel
    for path in ("/admin/users", "/admin/sites", "/admin/audit", "/sites/sweet-home/members", "/account/tokens"):
        panel.open(path)
        assert_fits(panel, width, path)


def test_the_admins_menu_is_one_line_on_a_1280_px_desk(admin_panel):
    panel = admin_panel
    set_viewport(panel.driver, 1280, 900)
    try:
        panel.open("/admin/users")
        tops = panel.driver.execute_script(
            "return [...document.querySelectorAll('#nav .nav-link')].map((e) => Math.round(e.getBoundingClientRect().top))")
        # One line: every entry's top within a few pixels (the sign-out button sits a pixel off the links).
        assert len(tops) >= 10 and max(tops) - min(tops) <= 4, f"the menu wraps: link tops {tops}"
        assert panel.find(".navbar").size["height"] < 80
    finally:
        reset_viewport(panel.driver)


def test_phone_menu_opens(ranger_panel, width):
    panel = ranger_panel
    panel.open("/sites/sweet-home")
    sites_link = panel.find("#nav a[href='/sites']")
    if width == 375:
        assert not sites_link.is_displayed(), "on a phone the menu is folded"
        toggler = panel.find("button.navbar-toggler")
        assert toggler.get_attribute("aria-expanded") == "false"
        toggler.click()
        panel.wait().until(lambda d: sites_link.is_displayed())
        assert toggler.get_attribute("aria-expanded") == "true"
    assert sites_link.is_displayed()
    assert panel.find("#nav form[action='/logout'] button").is_displayed()
