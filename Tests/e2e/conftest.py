"""Fixtures of the browser suite.

One real server for the whole session (`trail-companion serve --demo` on a free loopback port, a fresh data
folder), stopped at the end whatever happens. Under pytest-xdist (scripts/test.sh runs two workers, a file at a time)
each worker is a session of its own, with its own server: a file never relies on what another file left behind. The admin's one-time password is read from the server's
output and changed once, at the first sign-in, as a person would. Each test gets a fresh headless Chromium.

Later features add their fixtures here and their scenarios as new test_*.py files. The server scans with a real
libclamav engine loaded with one test signature (EICAR), so uploads get real verdicts and tours can be published;
`reviewers` and `review_site` (two approvals required) serve the review flow.

At the end, no Chromium, chromedriver or server the suite started may still be running, and the wall time is printed.
"""
from __future__ import annotations

import secrets
import time

import pytest

from support import (ADMIN_EMAIL, AUDITED, Account, Api, Panel, Server, Store, chrome, console_errors, mark_suite_processes,
                     suite_processes, write_signatures)

E2E_SITE = "e2e-park"  # where scenarios build their tours; the demo site stays as shipped for the screenshots
REVIEW_SITE = "review-park"  # two approvals required: the review flow's tours


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


_STARTED = time.monotonic()
_LEFT_RUNNING: list[str] | None = None  # what the end-of-session check found (None: it did not run)


def pytest_configure(config):
    global _STARTED
    _STARTED = time.monotonic()
    mark_suite_processes()


def pytest_terminal_summary(terminalreporter):
    if AUDITED:
        terminalreporter.write_line(f"axe-core (serious/critical) checked {len(AUDITED)} page states: {', '.join(sorted(set(AUDITED)))}")
    if _LEFT_RUNNING is not None:
        terminalreporter.write_line("processes left running by the suite: " + ("; ".join(_LEFT_RUNNING) if _LEFT_RUNNING else "none"))
    elapsed = time.monotonic() - _STARTED
    terminalreporter.write_line(f"e2e suite wall time: {elapsed:.1f} s ({int(elapsed // 60)} min {elapsed % 60:04.1f} s)")


@pytest.fixture(scope="session", autouse=True)
def no_processes_left_running():
    """Set up before, and so torn down after, every other session fixture (the server, the browsers): then no
    Chromium, chromedriver or trail-companion process this run started may still be running."""
    global _LEFT_RUNNING
    yield
    deadline = time.monotonic() + 20  # Chromium's helpers take a moment to follow the browser out
    while (left := suite_processes()) and time.monotonic() < deadline:
        time.sleep(0.2)
    _LEFT_RUNNING = left
    assert not left, "processes started by the suite are still running:\n" + "\n".join(left)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("trail-data")
    # A real libclamav engine with one test signature (EICAR): uploads are really scanned, packages really built.
    signatures = write_signatures(tmp_path_factory.mktemp("clamav-db"))
    server = Server(data, extra_args=("--clamav-db", str(signatures)))
    try:
        server.start()
        assert server.one_time_password, f"no one-time password in the server's first-start output:\n{server.log_tail()}"
        yield server
    finally:
        server.stop()
        assert server.process is None or server.process.poll() is not None, "the server is still running"


@pytest.fixture(scope="session")
def admin(server) -> Account:
    """The first admin: signs in with the printed one-time password, is sent to choose a new one, and does."""
    password = "e2e-" + secrets.token_urlsafe(12)
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(ADMIN_EMAIL, server.one_time_password)
        assert panel.path() == "/account/password", f"first sign-in led to {panel.path()}"
        assert "one-time password" in panel.text("main .alert-info")
        panel.change_password(server.one_time_password, password)
        assert panel.path() == "/sites"
        assert "password has been changed" in panel.notice()
    finally:
        driver.quit()
    return Account(ADMIN_EMAIL, password, "Administrator")


@pytest.fixture(scope="session")
def api(server, admin) -> Api:
    """The management API as the admin, with a bearer token made by `trail-companion token create`."""
    return Api(server.base_url, server.create_token(ADMIN_EMAIL, "e2e-suite"))


@pytest.fixture(scope="session")
def store(server) -> Store:
    return Store(server.data / "trail.sqlite")


@pytest.fixture(scope="session")
def e2e_site(server, admin) -> str:
    """A site for the scenarios' tours, created on the admin's page."""
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(admin.email, admin.password)
        panel.create_site(E2E_SITE, "E2E Test Park", "Tours made by the browser suite.")
        assert panel.path() == f"/sites/{E2E_SITE}"
    finally:
        driver.quit()
    return E2E_SITE


@pytest.fixture(scope="session")
def ranger(server, admin, e2e_site) -> Account:
    """A park ranger who manages the demo site and the suite's site: created on the admin's Users page with a
    one-time password, made manager on the sites' Members pages, and through their own first sign-in."""
    account = Account("dana.ranger@trail.local", "ranger-" + secrets.token_urlsafe(12), "Dana Ranger")
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(admin.email, admin.password)
        one_time = panel.create_user(account.email, account.name)
        for site in ("sweet-home", e2e_site):
            panel.add_member(site, account.email, "manager")
            assert account.email in panel.text("main table")
        panel.sign_out()
        panel.sign_in(account.email, one_time)
        assert panel.path() == "/account/password"
        panel.change_password(one_time, account.password)
        assert panel.path() == "/sites"
    finally:
        driver.quit()
    return account


def first_sign_in(panel: Panel, account: Account, one_time: str) -> None:
    """A new user's first sign-in with the one-time password an admin handed over, choosing their own."""
    panel.sign_in(account.email, one_time)
    assert panel.path() == "/account/password", f"first sign-in of {account.email} led to {panel.path()}"
    panel.change_password(one_time, account.password)
    assert panel.path() == "/sites"


@pytest.fixture(scope="session")
def reviewers(server, admin) -> list[Account]:
    """Two reviewers, made as the ranger was: created on the admin's Users page with a one-time password, then
    their own first sign-in. Their reviewer memberships come with `review_site`."""
    accounts = [Account("rosa.reviewer@trail.local", "rosa-" + secrets.token_urlsafe(12), "Rosa Reviewer"),
                Account("sam.reviewer@trail.local", "sam-" + secrets.token_urlsafe(12), "Sam Reviewer")]
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(admin.email, admin.password)
        one_time = [panel.create_user(account.email, account.name) for account in accounts]
        panel.sign_out()
        for account, password in zip(accounts, one_time):
            first_sign_in(panel, account, password)
            panel.sign_out()
    finally:
        driver.quit()
    return accounts


@pytest.fixture(scope="session")
def review_site(server, admin, ranger, reviewers, store) -> str:
    """A site that needs two approvals (set on the admin's Edit site page), with the ranger as an author and the two
    reviewers as reviewers (on its Members page)."""
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(admin.email, admin.password)
        panel.create_site(REVIEW_SITE, "Review Test Park", "Tours the browser suite sends through review.")
        site = store.row("SELECT * FROM site WHERE slug = ?", REVIEW_SITE)
        assert site["requiredApprovals"] == 1, "a new site needs one approval"
        panel.open(f"/admin/sites/{site['id']}")
        panel.submit_form(f"form[action='/admin/sites/{site['id']}']", requiredApprovals="2")
        assert panel.notice() == "Site saved."
        assert store.row("SELECT requiredApprovals FROM site WHERE slug = ?", REVIEW_SITE)["requiredApprovals"] == 2
        panel.add_member(REVIEW_SITE, ranger.email, "author")
        for account in reviewers:
            panel.add_member(REVIEW_SITE, account.email, "reviewer")
        roles = {r["email"]: r["role"] for r in store.rows(
            "SELECT user.email, membership.role FROM membership JOIN user ON user.id = membership.userId WHERE siteId = ?", site["id"])}
        assert roles == {ranger.email: "author", reviewers[0].email: "reviewer", reviewers[1].email: "reviewer"}, roles
    finally:
        driver.quit()
    return REVIEW_SITE


@pytest.fixture
def driver(request, server, tmp_path_factory):
    """A fresh headless Chromium for one test. On failure, the page's screenshot and HTML go to a temp folder,
    and the server's last log lines are printed if it is no longer running."""
    driver = chrome()
    try:
        yield driver
    finally:
        try:
            report = getattr(request.node, "report_call", None)
            if report is not None and report.failed:
                folder = tmp_path_factory.mktemp("failure")
                driver.save_screenshot(str(folder / "page.png"))
                (folder / "page.html").write_text(driver.page_source)
                print(f"\n[e2e] failure artefacts of {request.node.name}: {folder} (at {driver.current_url})")
                if server.process.poll() is not None:
                    print(f"[e2e] the server exited with {server.process.returncode}:\n{server.log_tail()}")
        except Exception as error:  # the artefacts are a courtesy; the test's own failure is what counts
            print(f"\n[e2e] could not save failure artefacts: {error}")
        driver.quit()


@pytest.fixture
def panel(driver, server, request) -> Panel:
    """The panel in a fresh browser, signed out. After the test, the browser console must hold no script error."""
    panel = Panel(driver, server)
    yield panel
    report = getattr(request.node, "report_call", None)
    if report is not None and report.passed:
        errors = console_errors(driver)
        assert not errors, "errors in the browser console:\n" + "\n".join(errors)


@pytest.fixture
def admin_panel(panel, admin) -> Panel:
    panel.sign_in(admin.email, admin.password)
    assert panel.path() == "/sites", f"signing in led to {panel.path()}"
    return panel


@pytest.fixture
def ranger_panel(panel, ranger) -> Panel:
    panel.sign_in(ranger.email, ranger.password)
    assert panel.path() == "/sites", f"signing in led to {panel.path()}"
    return panel
