"""A district's site page in the browser: 30 tours, 25 to a page, found with the search box and the state filter.

The manager types part of a name and presses Enter (the keyboard, as a ranger would), narrows the list to a state,
gets "No tours match." with a way back, and pages with Next and Previous. The page stays axe-clean throughout.

This module runs its own server (its own data folder), so its 30 tours do not show on the other scenarios' pages."""
from __future__ import annotations

import pytest
from selenium.webdriver.common.keys import Keys

from support import Api, Panel, Server, console_errors

SITE = "district"
PASSWORD = "district-" + "manager-password"
EMAIL = "manager@district.test"
NAMES = [f"Trail {n:03d}" for n in range(1, 31)]


@pytest.fixture(scope="module")
def district(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("district-data"), demo=False)
    server.start()
    try:
        server.cli("site", "create", "--slug", SITE, "--name", "District Park")
        server.cli("user", "create", "--email", EMAIL, "--name", "Dana Manager", "--password", PASSWORD)
        server.cli("member", "add", "--site", SITE, "--email", EMAIL, "--role", "manager")
        api = Api(server.base_url, server.create_token(EMAIL, "district"))
        for name in reversed(NAMES):  # made in the reverse order: the page lists by name, not by age
            api.create_tour(SITE, name)
        yield server
    finally:
        server.stop()


def tour_names(panel: Panel) -> list[str]:
    return [link.text for link in panel.all("table tbody td:first-child > a")]


def test_the_site_page_pages_searches_and_filters(district, driver):
    panel = Panel(driver, district)
    panel.sign_in(EMAIL, PASSWORD)
    panel.open(f"/sites/{SITE}")
    assert tour_names(panel) == NAMES[:25]
    assert not panel.all("a[rel=prev]")
    panel.assert_accessible("site page, first of two")

    # Next, then Previous.
    panel.submit(panel.find("a[rel=next]"))
    assert tour_names(panel) == NAMES[25:]
    assert not panel.all("a[rel=next]")
    panel.submit(panel.find("a[rel=prev]"))
    assert tour_names(panel) == NAMES[:25]

    # The search box, by keyboard: type and press Enter.
    search = panel.find("#tour-search")
    assert panel.find("label[for=tour-search]").text == "Tour name contains"
    search.send_keys("trail 02")
    driver.execute_script("window.__e2eOldPage = true")
    search.send_keys(Keys.ENTER)
    panel.wait_new_page()
    assert tour_names(panel) == [f"Trail {n:03d}" for n in range(20, 30)]
    assert panel.find("#tour-search").get_attribute("value") == "trail 02", "the box keeps the search"
    assert not panel.all("a[rel=next]"), "ten results: one page"

    # A state with none of them: said so, with a way back to every tour.
    panel.fill(panel.find("#tour-state"), "published")
    panel.submit(panel.find("form[role=search] button[type=submit]"))
    assert tour_names(panel) == []
    assert "No tours match." in panel.text("table tbody")
    assert panel.find("#tour-state").get_attribute("value") == "published"
    panel.assert_accessible("site page, nothing found")
    panel.submit(panel.find("form[role=search] a.btn"))
    assert panel.path() == f"/sites/{SITE}"
    assert tour_names(panel) == NAMES[:25]

    # Drafts are every one of them; the filter keeps paging.
    panel.fill(panel.find("#tour-state"), "draft")
    panel.submit(panel.find("form[role=search] button[type=submit]"))
    assert tour_names(panel) == NAMES[:25]
    panel.submit(panel.find("a[rel=next]"))
    assert tour_names(panel) == NAMES[25:]
    assert "state=draft" in panel.path(), "the page link keeps the filter"
    assert not console_errors(driver)
