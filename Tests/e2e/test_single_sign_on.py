"""Single sign-on through the browser: Chromium goes from the sign-in page's agency button to a real OpenID Connect
provider on loopback (Authlib's authorization server, Tests/TrailServerTests/Scripts/oidc_provider.py), signs in on
its form, comes back signed in, and signs out of both. A person the server does not know is refused with a message
that says what to do, and password sign-in stays on the same page."""
from __future__ import annotations

import json
import os
import secrets
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from support import ADMIN_EMAIL, Panel, Server, chrome, wait_for

REPO = Path(__file__).resolve().parents[2]
CLIENT_ID = "trail-companion"
PASSWORD = "sso-test-password-1"


@pytest.fixture(scope="module")
def provider():
    secret = secrets.token_urlsafe(24)
    process = subprocess.Popen([sys.executable, str(REPO / "Tests/TrailServerTests/Scripts/oidc_provider.py"), CLIENT_ID, secret],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        issuer = f"http://127.0.0.1:{int(process.stdout.readline())}"

        def answers():
            try:
                return urllib.request.urlopen(issuer + "/stats", timeout=2).status == 200
            except OSError:
                return False
        wait_for("the OpenID provider", answers, timeout=30)

        def control(**changes):
            request = urllib.request.Request(issuer + "/control", data=json.dumps(changes).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=10).read()
        yield {"issuer": issuer, "secret": secret, "control": control}
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(provider, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sso-secret")
    secret_file = folder / "client-secret"
    secret_file.write_text(provider["secret"] + "\n")
    os.chmod(secret_file, 0o600)
    server = Server(tmp_path_factory.mktemp("sso-data"), demo=False, extra_args=(
        "--oidc-issuer", provider["issuer"], "--oidc-client-id", CLIENT_ID, "--oidc-client-secret-file", str(secret_file)))
    try:
        server.start()
        server.cli("site", "create", "--slug", "falls", "--name", "Falls District")
        server.cli("user", "create", "--email", "pat.ranger@agency.gov", "--name", "Pat Ranger", "--password", PASSWORD)
        server.cli("member", "add", "--site", "falls", "--email", "pat.ranger@agency.gov", "--role", "author")
        yield server
    finally:
        server.stop()


def sign_on(panel: Panel, server: Server, provider: dict, email: str) -> None:
    """From the sign-in page: the agency button, the provider's own form as `email`, and back to this server."""
    provider["control"]()
    panel.find("#oidc-sign-in").click()
    panel.wait(15).until(lambda d: d.current_url.startswith(provider["issuer"] + "/authorize?"))
    panel.find("#email").send_keys(email)
    panel.find("button[type='submit']").click()
    panel.wait(15).until(lambda d: d.current_url.startswith(server.base_url))


def test_an_agency_account_signs_in_through_the_provider_and_out_of_both(server, provider):
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.open("/login?next=/sites/falls")
        button = panel.find("#oidc-sign-in")
        assert button.text == "Sign in with your agency account"
        assert panel.find("#password").is_displayed(), "password sign-in stays on the page"
        panel.assert_accessible("sign-in with the agency button")
        panel.screenshot("sign-in-agency")

        sign_on(panel, server, provider, "pat.ranger@agency.gov")
        assert panel.path() == "/sites/falls", panel.text("main")
        assert "Falls District" in panel.text("main")

        # Signing out ends the session here and, through the provider's end-session endpoint, there.
        panel.find("form[action='/logout'] button").click()
        panel.wait(15).until(lambda d: d.current_url.startswith(provider["issuer"] + "/logout"))
        assert "Signed out of the agency" in panel.text("main")
        panel.open("/sites/falls")
        assert panel.path().startswith("/login?"), "the session here ended too"
    finally:
        driver.quit()


def test_a_person_without_an_account_is_told_what_to_do(server, provider):
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.open("/login")
        sign_on(panel, server, provider, "visiting.ranger@agency.gov")
        message = panel.text("#login-error")
        assert "There is no account for visiting.ranger@agency.gov here. Ask a site manager to add you." == message, message
        assert panel.find("#password").is_displayed()
        panel.assert_accessible("single sign-on refused: no account")
        panel.open("/sites")
        assert panel.path().startswith("/login?"), "nobody was signed in"
    finally:
        driver.quit()


def test_an_admin_turns_password_sign_in_off_for_a_site(server, provider):
    site_id = sqlite3.connect(f"file:{server.data / 'trail.sqlite'}?mode=ro", uri=True).execute(
        "SELECT id FROM site WHERE slug = 'falls'").fetchone()[0]
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(ADMIN_EMAIL, server.one_time_password)
        panel.change_password(server.one_time_password, "admin-" + secrets.token_urlsafe(12))
        panel.open(f"/admin/sites/{site_id}")
        box = panel.find("#passwordsOff")
        assert not box.is_selected()
        assert panel.find("label[for='passwordsOff']").text == "Members sign in with their agency account only"
        panel.assert_accessible("site settings with the sign-in switch")
        box.click()
        panel.submit(panel.find("form[action$='/sign-in'] [type=submit]"))
        assert "sign in through the agency's provider only" in panel.text("main")
        assert panel.find("#passwordsOff").is_selected()
        panel.sign_out()

        # The site's ranger, with the right password: refused, told what to do, and the agency button is right there.
        panel.sign_in("pat.ranger@agency.gov", PASSWORD)
        assert panel.path().startswith("/login")
        assert panel.text("#login-error") == "Falls District signs in with your agency account only: use \u201cSign in with your agency account\u201d below."
        assert panel.find("#oidc-sign-in").is_displayed()
        panel.assert_accessible("password sign-in refused for a single sign-on site")
        sign_on(panel, server, provider, "pat.ranger@agency.gov")
        assert panel.path() == "/sites", panel.path()
    finally:
        driver.quit()
