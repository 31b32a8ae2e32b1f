"""Two-step sign-in through the browser, on a server of its own with the default requirement (admins must use it):
the first admin enrols at their first sign-in by typing the key shown as text into pyotp (an authenticator app of
its own), saves the recovery codes, signs out, and signs in again with password and code, then with a recovery code."""
import re
import secrets
import time

import pyotp
import pytest

from support import ADMIN_EMAIL, Panel, Server, Store, chrome, write_signatures


@pytest.fixture(scope="module")
def two_step_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("trail-two-step")
    signatures = write_signatures(tmp_path_factory.mktemp("clamav-two-step"))
    server = Server(data, demo=False, extra_args=("--clamav-db", str(signatures), "--require-two-step", "admins"))
    try:
        server.start()
        assert server.one_time_password, f"no one-time password in the server's first-start output:\n{server.log_tail()}"
        yield server
    finally:
        server.stop()


def test_admin_enrols_at_first_sign_in_then_signs_in_with_a_code(two_step_server):
    server = two_step_server
    store = Store(server.data / "trail.sqlite")
    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in(ADMIN_EMAIL, server.one_time_password)
        assert panel.path() == "/login/enrol", "an admin must enrol before the panel opens"
        assert panel.heading() == "Set up two-step sign-in"
        assert panel.find(".two-step-qr svg").get_attribute("aria-label")
        panel.assert_accessible("two-step enrolment")
        panel.screenshot("two-step-enrol")
        panel.open("/sites")
        assert panel.path().startswith("/login"), "the half-signed-in browser opens no page of the panel"
        panel.open("/login/enrol")

        key = panel.text("#two-step-secret").replace(" ", "")
        assert re.fullmatch(r"[A-Z2-7]{32}", key), key
        totp = pyotp.TOTP(key)
        panel.submit_form("form[action='/login/enrol']", code="000000" if totp.now() != "000000" else "111111")
        assert panel.find("#code").get_attribute("aria-describedby").split() == ["code-help", "code-error"]
        panel.assert_accessible("two-step enrolment with an error")

        panel.submit_form("form[action='/login/enrol']", code=totp.now())
        assert panel.heading() == "Your recovery codes"
        codes = [item.text.strip() for item in panel.all("#recovery-codes li")]
        assert len(codes) == 10 and all(re.fullmatch(r"[a-z2-7]{4}(-[a-z2-7]{4}){3}", code) for code in codes), codes
        panel.assert_accessible("recovery codes")
        assert panel.find("main a.btn-primary").get_attribute("href").endswith("/account/password")
        panel.open("/account/password")
        assert panel.path() == "/account/password", "then the one-time password is replaced"
        password = "e2e-" + secrets.token_urlsafe(12)
        panel.change_password(server.one_time_password, password)
        assert panel.path() == "/sites"
        panel.sign_out()

        # Password, then a code: the enrolment's code is spent, so the app's next one (accepted one step early).
        panel.sign_in(ADMIN_EMAIL, password)
        assert panel.path() == "/login/code"
        assert not driver.get_cookie("tc_session"), "no session before the code"
        panel.assert_accessible("two-step code")
        panel.submit_form("form[action='/login/code']", code=totp.at(time.time() + 30))
        assert panel.path() == "/sites", f"signed in with password and code: {panel.path()}"
        assert not driver.get_cookie("tc_pending")
        panel.open("/account/two-step")
        assert "Recovery codes left: 10" in panel.text("main")
        panel.assert_accessible("two-step status")
        panel.sign_out()

        # A recovery code works once.
        panel.sign_in(ADMIN_EMAIL, password)
        panel.submit_form("form[action='/login/code']", code=codes[0])
        assert panel.path() == "/sites"
        assert "recovery code" in panel.notice()
        panel.sign_out()
        panel.sign_in(ADMIN_EMAIL, password)
        panel.submit_form("form[action='/login/code']", code=codes[0])
        assert panel.path() == "/login/code"
        assert "not right" in panel.text("#code-error")
        panel.assert_accessible("two-step code with an error")
    finally:
        driver.quit()

    actions = [row["action"] for row in store.rows("SELECT action FROM auditEvent ORDER BY id")]
    for action in ("session.password", "twoStep.enrolStart", "twoStep.enrolFailed", "twoStep.enrol", "twoStep.recoveryCode",
                   "twoStep.failed", "session.start"):
        assert action in actions, f"no {action} in the audit log"
    log = server.log()
    assert key not in log and all(code not in log for code in codes), "a secret reached the server's log"
