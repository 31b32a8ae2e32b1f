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

from support import ADMIN_EMAIL, Panel, Server, chrome, free_port, wait_for

CLIENT_ID = "trail-companion"
PASSWORD = "mock-sso-password-1"
RANGER = "pat.ranger@agency.gov"


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
         "--user-claims", claims("agency-0003", ADMIN_EMAIL, "Admin")],
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
