"""Single sign-on through a provider nobody here wrote: `oidc-provider-mock` from PyPI, a conforming OpenID provider
that publishes a single key and names no `kid` in its tokens. Chromium signs on through its own authorization form,
an agency account whose provider id (`sub`) changed is refused, and an admin whose token shows no second factor is
sent to set one up here."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.request

import pytest

from support import ADMIN_EMAIL, Api, Panel, Server, Store, chrome, free_port, wait_for

CLIENT_ID = "trail-companion"
PASSWORD = "mock-sso-password-1"
RANGER = "pat.ranger@agency.gov"
MANAGER = "morgan.manager@agency.gov"
COLLEAGUE = "casey.colleague@agency.gov"


def claims(sub: str, email: str, name: str) -> str:
    return json.dumps({"sub": sub, "email": email, "email_verified": True, "name": name})


@pytest.fixture(scope="module")
def provider():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--port", str(port),
         "--user-claims", claims("agency-0001", RANGER, "Pat Ranger"),
         # The agency gave the same address to a newcomer: another person (another sub) with the ranger's email.
         "--user-claims", claims("agency-0002", RANGER, "New Person"),
         "--user-claims", claims("agency-0003", ADMIN_EMAIL, "Admin"),
         "--user-claims", claims("agency-0004", COLLEAGUE, "Casey Colleague")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    issuer = f"http://127.0.0.1:{port}"
    try:
        def answers():
            try:
                return urllib.request.urlopen(issuer + "/.well-known/openid-configuration", timeout=2).status == 200
            except OSError:
                return False
        wait_for("oidc-provider-mock", answers, timeout=30)
        keys = json.load(urllib.request.urlopen(issuer + "/jwks", timeout=5))["keys"]
        assert len(keys) == 1, "the case under test: a single-key provider"
        yield issuer
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(provider, tmp_path_factory):
    folder = tmp_path_factory.mktemp("mock-sso-secret")
    secret_file = folder / "client-secret"
    secret_file.write_text(secrets.token_urlsafe(24) + "\n")
    os.chmod(secret_file, 0o600)
    server = Server(tmp_path_factory.mktemp("mock-sso-data"), demo=False, extra_args=(
        "--oidc-issuer", provider, "--oidc-client-id", CLIENT_ID, "--oidc-client-secret-file", str(secret_file)))
    try:
        server.start()
        server.cli("site", "create", "--slug", "falls", "--name", "Falls District")
        server.cli("user", "create", "--email", RANGER, "--name", "Pat Ranger", "--password", PASSWORD)
        server.cli("member", "add", "--site", "falls", "--email", RANGER, "--role", "author")
        server.cli("user", "create", "--email", MANAGER, "--name", "Morgan Manager", "--password", PASSWORD)
        server.cli("member", "add", "--site", "falls", "--email", MANAGER, "--role", "manager")
        yield server
    finally:
        server.stop()


def sign_on(panel: Panel, server: Server, provider: str, sub: str) -> None:
    """The agency button, then the provider's own form: the predefined person `sub`, and back to this server."""
    panel.find("#oidc-sign-in").click()
    panel.wait(15).until(lambda d: d.current_url.startswith(provider + "/oauth2/authorize"))
    panel.find(f"button[name='sub'][value='{sub}']").click()
    panel.wait(15).until(lambda d: d.current_url.startswith(server.base_url))


def test_a_ranger_signs_on_and_a_changed_agency_id_is_refused(server, provider):
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.open("/login?next=/sites/falls")
        sign_on(panel, server, provider, "agency-0001")
        assert panel.path() == "/sites/falls", panel.text("main")
        assert "Falls District" in panel.text("main")
        panel.sign_out()

        # Someone else at the provider, with the same email: the account stays the ranger's.
        panel.open("/login?next=/sites/falls")
        sign_on(panel, server, provider, "agency-0002")
        message = panel.text("#login-error")
        assert "is not the one that first signed in here as pat.ranger@agency.gov" in message, message
        panel.assert_accessible("single sign-on refused: another agency account")
        panel.open("/sites/falls")
        assert panel.path().startswith("/login?"), "nobody was signed in"
        assert "subject changed for pat.ranger@agency.gov" in server.log(), "the refusal is in the server's log"

        # The ranger again: still welcome.
        panel.open("/login?next=/sites/falls")
        sign_on(panel, server, provider, "agency-0001")
        assert panel.path() == "/sites/falls", panel.text("main")
    finally:
        driver.quit()


def test_an_admin_without_a_second_factor_at_the_provider_sets_one_up_here(server, provider):
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.open("/login")
        sign_on(panel, server, provider, "agency-0003")
        assert panel.path() == "/login/enrol", panel.text("main")
        assert driver.find_elements("css selector", "#two-step-secret"), "the set-up key is shown"
        panel.open("/admin/users")
        assert panel.path().startswith("/login"), "not signed in before the second step"
    finally:
        driver.quit()


def test_an_account_made_from_a_shown_invitation_link_becomes_the_colleagues_at_their_sign_on(server, provider):
    """No SMTP: the invitation link is shown to the manager, who could make the colleague's account with a password of
    their own. The colleague's first sign-on through the provider voids that password and ends the manager's session;
    until then the account is marked as not proven (the admin's list says so, and says who invited whom)."""
    manager_api = Api(server.base_url, server.create_token(MANAGER, "invite"))
    invitation = manager_api.post("/manage/sites/falls/invitations", {"email": COLLEAGUE, "role": "reviewer"})
    assert invitation["emailed"] is False and invitation["link"], invitation
    manager_driver, colleague_driver = chrome(), chrome()
    try:
        # The manager uses the link themselves and picks the colleague's password.
        manager = Panel(manager_driver, server)
        manager_driver.get(invitation["link"])
        manager.wait_ready()
        premade = "premade-by-the-manager-1"
        manager.submit_form("form[action^='/invite/']", displayName="Casey Colleague", password=premade,
                            confirmPassword=premade)
        assert manager.path() == "/sites/falls", manager.text("main")
        user = Store(server.data / "trail.sqlite").row("SELECT id, addressProven FROM user WHERE email = ?", COLLEAGUE)
        assert user["addressProven"] == 0, "an account made from a shown link proves nothing about the address"

        # The colleague signs on through the agency: the provider vouches for the address.
        colleague = Panel(colleague_driver, server)
        colleague.open("/login?next=/sites/falls")
        sign_on(colleague, server, provider, "agency-0004")
        assert colleague.path() == "/sites/falls", colleague.text("main")
        assert Store(server.data / "trail.sqlite").row("SELECT addressProven FROM user WHERE email = ?", COLLEAGUE)["addressProven"] == 1
        assert Store(server.data / "trail.sqlite").audit("user.addressProven"), "the proof is in the audit log"

        # The manager's session in the colleague's account is over, and the pre-made password opens nothing.
        manager.open("/sites/falls")
        assert manager.path().startswith("/login"), "the session made with the pre-made password ended"
        manager.sign_in(COLLEAGUE, premade)
        assert manager.path().startswith("/login"), "the pre-made password no longer opens the account"
        assert "The email or password is not right." in manager.text("#login-error")
        # The colleague is still in.
        colleague.open("/sites/falls")
        assert colleague.path() == "/sites/falls"
    finally:
        manager_driver.quit()
        colleague_driver.quit()
