"""Without a mouse: a waypoint is added with the form and reordered with the ↑/↓ buttons, with TAB and ENTER only
(and the letters and digits typed into the fields)."""
from selenium.webdriver.common.keys import Keys

FRAME = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}


def has_id(element_id):
    return lambda element: element.get_attribute("id") == element_id


def has_label(label):
    return lambda element: element.get_attribute("aria-label") == label


def test_add_and_reorder_a_waypoint_with_the_keyboard_only(ranger_panel, e2e_site, api, store):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Keyboard Trail", frame=FRAME)
    api.add_waypoint(tour["id"], "Trailhead", 44.37, -122.18)
    api.add_waypoint(tour["id"], "Viewpoint", 44.41, -122.05)
    panel.open(f"/tours/{tour['id']}")

    # From the top of the page, TAB to the waypoint form's name field and fill the form in.
    panel.tab_to(has_id("wp-name"))
    panel.press("Shelter")
    panel.press(Keys.TAB)
    assert panel.focused().get_attribute("id") == "wp-latitude"
    panel.press("44.395")
    panel.press(Keys.TAB)
    assert panel.focused().get_attribute("id") == "wp-longitude"
    panel.press("-122.1")
    panel.press(Keys.TAB)
    assert panel.focused().get_attribute("id") == "wp-radius"
    panel.press("40")
    panel.press(Keys.TAB)
    assert panel.focused().get_attribute("id") == "wp-description"
    panel.press("A dry place in the rain.")
    panel.press(Keys.TAB)
    button = panel.focused()
    assert button.text == "Add waypoint" and button.get_attribute("type") == "submit"
    panel.press_and_wait(Keys.ENTER)

    assert panel.notice() == "Waypoint “Shelter” added."
    assert [name for name, _ in panel.waypoint_rows()] == ["Trailhead", "Viewpoint", "Shelter"]
    stored = store.waypoints(tour["id"])
    assert [(w["name"], w["position"]) for w in stored] == [("Trailhead", 1), ("Viewpoint", 2), ("Shelter", 3)]
    assert (stored[2]["latitude"], stored[2]["longitude"], stored[2]["description"]) == (44.395, -122.1, "A dry place in the rain.")
    assert stored[2]["triggerRadiusMeters"] == 40
    panel.assert_accessible("tour page after a keyboard-only add")

    # Move "Shelter" up twice with its ↑ button: TAB to it, ENTER; the page comes back with it one place higher.
    for expected in (["Trailhead", "Shelter", "Viewpoint"], ["Shelter", "Trailhead", "Viewpoint"]):
        panel.tab_to(has_label("Move Shelter up"))
        panel.press_and_wait(Keys.ENTER)
        assert panel.notice() == "Moved “Shelter” up."
        assert [name for name, _ in panel.waypoint_rows()] == expected
        assert [w["name"] for w in store.waypoints(tour["id"])] == expected
        assert [w["position"] for w in store.waypoints(tour["id"])] == [1, 2, 3]

    # First in the list, its ↑ is disabled (TAB skips it) and ↓ takes it back down.
    assert panel.find(f"#waypoint-{stored[2]['id']} button[aria-label='Move Shelter up']").get_attribute("disabled") is not None
    panel.tab_to(has_label("Move Shelter down"))
    panel.press_and_wait(Keys.ENTER)
    assert [name for name, _ in panel.waypoint_rows()] == ["Trailhead", "Shelter", "Viewpoint"]
    assert [w["name"] for w in api.tour(tour["id"])["waypoints"]] == ["Trailhead", "Shelter", "Viewpoint"]
