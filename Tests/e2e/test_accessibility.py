"""axe-core on every page of the panel, in the states people see (empty, filled, with validation errors):
no `serious` or `critical` violation. Each scenario also checks the pages it walks through."""
from support import AUDITED, axe_report, axe_violations


def demo_tour(api) -> dict:
    # The list answers summaries, a page at a time: find the tour by name, then read it whole (with its waypoints).
    listed = next(t for t in api.get("/manage/tours?site=sweet-home&q=Santiam+Wagon+Road")["tours"] if t["name"] == "Santiam Wagon Road")
    return api.get(f"/manage/tours/{listed['id']}")


def audit_pages(panel, steps) -> None:
    """Runs each step (open a page, submit a form...) and axe after it; one report for every page at the end."""
    problems = []
    for label, step in steps:
        step()
        assert panel.find("h1").is_displayed(), f"{label}: no heading"
        violations = axe_violations(panel.driver)
        AUDITED.append(label)
        if violations:
            problems.append(f"--- {label} ({panel.path()})\n{axe_report(violations)}")
    assert not problems, "\n".join(problems)


def test_every_admin_page(admin_panel, api, store):
    panel = admin_panel
    tour = demo_tour(api)
    waypoint = tour["waypoints"][0]
    site_id = store.row("SELECT id FROM site WHERE slug = 'sweet-home'")["id"]

    def new_tour_with_errors():
        panel.open("/sites/sweet-home/tours/new")
        panel.submit_form("form[action='/sites/sweet-home/tours']", name="")
        assert panel.all("#name.is-invalid")

    def token_created():
        panel.open("/account/tokens")
        panel.submit_form("form[action='/account/tokens']", name="axe check")
        assert panel.find("#new-token").get_attribute("value")

    def site_with_errors():
        panel.open("/admin/sites")
        panel.submit_form("form[action='/admin/sites']", name="", slug="Not A Slug!", requiredApprovals="0")
        assert panel.all("#s-slug.is-invalid")

    def tile_server_with_errors():
        panel.open("/admin/tiles")
        panel.submit_form("#tile-settings-form", urlTemplate="https://{s}.tile.osm.org/{z}/{x}/{y}.png", attribution="", tileCap="0")
        assert panel.all("#urlTemplate.is-invalid") and panel.all("#tileCap.is-invalid")

    def frame_with_errors():
        panel.open(f"/tours/{tour['id']}")
        panel.submit_form("#frame-form", north="10", south="20", east="-122", west="-121")
        assert panel.all("#frame-form .is-invalid") or panel.all("#frame-error")

    audit_pages(panel, [
        ("your sites", lambda: panel.open("/sites")),
        ("site: tour list", lambda: panel.open("/sites/sweet-home")),
        ("new tour", lambda: panel.open("/sites/sweet-home/tours/new")),
        ("new tour with errors", new_tour_with_errors),
        ("edit tour", lambda: panel.open(f"/tours/{tour['id']}/edit")),
        ("tour: frame editor and waypoints", lambda: panel.open(f"/tours/{tour['id']}")),
        ("tour: frame with errors", frame_with_errors),
        ("waypoint", lambda: panel.open(f"/tours/{tour['id']}/waypoints/{waypoint['id']}")),
        ("site members", lambda: panel.open("/sites/sweet-home/members")),
        ("admin: users", lambda: panel.open("/admin/users")),
        ("admin: sites", lambda: panel.open("/admin/sites")),
        ("admin: site with errors", site_with_errors),
        ("admin: edit site", lambda: panel.open(f"/admin/sites/{site_id}")),
        ("admin: map tiles", lambda: panel.open("/admin/tiles")),
        ("admin: map tiles with errors", tile_server_with_errors),
        ("admin: audit log", lambda: panel.open("/admin/audit")),
        ("admin: audit log, filtered", lambda: panel.open(f"/admin/audit?objectType=tour&objectId={tour['id']}")),
        ("API tokens", lambda: panel.open("/account/tokens")),
        ("API token created", token_created),
        ("change password", lambda: panel.open("/account/password")),
        ("not found", lambda: panel.open("/tours/999999")),
    ])


def test_every_ranger_page(ranger_panel, api):
    """What a site manager sees (no admin menu, no admin banners)."""
    panel = ranger_panel
    tour = demo_tour(api)
    audit_pages(panel, [
        ("ranger: your sites", lambda: panel.open("/sites")),
        ("ranger: tour list", lambda: panel.open("/sites/sweet-home")),
        ("ranger: tour", lambda: panel.open(f"/tours/{tour['id']}")),
        ("ranger: waypoint", lambda: panel.open(f"/tours/{tour['id']}/waypoints/{tour['waypoints'][-1]['id']}")),
        ("ranger: members", lambda: panel.open("/sites/sweet-home/members")),
        ("ranger: forbidden admin page", lambda: panel.open("/admin/users")),
    ])


def test_signed_out_pages(panel):
    def wrong_password():
        panel.open("/login")
        panel.submit_form("form[action='/login']", email="nobody@trail.local", password="wrong-password")
        assert panel.find("#login-error").is_displayed()

    def help_from_sign_in():
        # The sign-in page's Help link opens the rangers' guide at its section, rendered by the server.
        panel.open("/login")
        panel.find("#help-link").click()
        assert panel.find("#signing-in").is_displayed()
        assert panel.driver.current_url.endswith("/help#signing-in")

    audit_pages(panel, [
        ("sign in", lambda: panel.open("/login")),
        ("sign in with an error", wrong_password),
        ("help: the rangers' guide", help_from_sign_in),
    ])
