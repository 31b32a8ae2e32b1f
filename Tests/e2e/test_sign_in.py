"""Signing in and out, and a new user's first sign-in with the one-time password an admin handed over."""
from selenium.webdriver.common.by import By

from support import ADMIN_EMAIL


def test_wrong_password_shows_an_error_and_opens_no_session(panel, admin, store):
    admin_id = store.row("SELECT id FROM user WHERE email = ?", ADMIN_EMAIL)["id"]
    sessions_before = store.row("SELECT count(*) AS n FROM session WHERE userId = ?", admin_id)["n"]
    failures_before = store.row("SELECT count(*) AS n FROM loginFailure WHERE email = ?", ADMIN_EMAIL)["n"]

    panel.sign_in(ADMIN_EMAIL, "not-the-password")

    assert panel.path() == "/login"
    assert panel.text("#login-error") == "The email or password is not right."
    assert panel.find("#email").get_attribute("value") == ADMIN_EMAIL, "the email is kept"
    assert panel.find("#password").get_attribute("value") == "", "the password is not sent back"
    assert not panel.all("form[action='/logout']"), "no one is signed in"
    panel.assert_accessible("login with an error")
    assert store.row("SELECT count(*) AS n FROM session WHERE userId = ?", admin_id)["n"] == sessions_before
    assert store.row("SELECT count(*) AS n FROM loginFailure WHERE email = ?", ADMIN_EMAIL)["n"] == failures_before + 1


def test_sign_in_and_out(panel, admin, store):
    admin_id = store.row("SELECT id FROM user WHERE email = ?", ADMIN_EMAIL)["id"]
    sessions_before = {r["tokenHash"] for r in store.rows("SELECT tokenHash FROM session WHERE userId = ?", admin_id)}

    panel.open("/sites")
    assert panel.path() == "/login?next=/sites", "signed-out visitors are sent to sign in"
    assert panel.find("input[name=next]").get_attribute("value") == "/sites"
    panel.assert_accessible("login")
    panel.submit_form("form[action='/login']", email=admin.email, password=admin.password)

    assert panel.path() == "/sites"
    assert panel.heading() == "Your sites"
    assert panel.find("a.nav-link[href='/account/password']").get_attribute("textContent").strip() == admin.name
    assert "Sweet Home Ranger District" in panel.text("main")
    cookie = panel.driver.get_cookie("tc_session")
    assert cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Lax"
    new_sessions = {r["tokenHash"] for r in store.rows("SELECT tokenHash FROM session WHERE userId = ?", admin_id)} - sessions_before
    assert len(new_sessions) == 1, "one new session is stored"
    assert cookie["value"] not in new_sessions, "only the token's hash is stored"

    panel.sign_out()
    assert panel.path() == "/login"
    assert panel.notice() == "You are signed out."
    assert not store.rows("SELECT 1 FROM session WHERE tokenHash = ?", new_sessions.pop()), "signing out ends the session on the server"
    panel.open("/sites")
    assert panel.path().startswith("/login")


def test_admin_creates_a_user_who_must_change_the_one_time_password(panel, admin, e2e_site, store):
    panel.sign_in(admin.email, admin.password)
    one_time = panel.create_user("robin.author@trail.local", "Robin Author")
    panel.assert_accessible("admin users, after creating a user")
    assert "robin.author@trail.local" in panel.text("main table")
    stored = store.row("SELECT * FROM user WHERE email = ?", "robin.author@trail.local")
    assert stored["displayName"] == "Robin Author" and stored["mustChangePassword"] == 1 and stored["isAdmin"] == 0
    assert stored["passwordHash"].startswith("$2") and one_time not in stored["passwordHash"]

    panel.add_member(e2e_site, "robin.author@trail.local", "author")
    panel.assert_accessible("site members")
    row = [r for r in panel.all("main table tbody tr") if "robin.author@trail.local" in r.text]
    assert row and "author" in row[0].text
    membership = store.row("SELECT m.role FROM membership m JOIN user u ON u.id = m.userId JOIN site s ON s.id = m.siteId "
                           "WHERE u.email = ? AND s.slug = ?", "robin.author@trail.local", e2e_site)
    assert membership == {"role": "author"}
    panel.sign_out()

    panel.sign_in("robin.author@trail.local", one_time)
    assert panel.path() == "/account/password", "a one-time password leads straight to the password page"
    assert "one-time password" in panel.text("main .alert-info")
    panel.assert_accessible("forced password change")
    panel.open("/sites")
    assert panel.path() == "/account/password", "nothing else opens before the password is changed"

    panel.submit_form("form[action='/account/password']", currentPassword=one_time, newPassword="short", confirmPassword="other")
    assert panel.path() == "/account/password"
    assert panel.all("#newPassword.is-invalid") and panel.all("#confirmPassword.is-invalid")
    assert panel.find("#newPassword").get_attribute("aria-describedby").split() == ["newPassword-help", "newPassword-error"]
    panel.assert_accessible("password change with errors")

    panel.change_password(one_time, "robins-own-password")
    assert panel.path() == "/sites"
    assert "password has been changed" in panel.notice()
    assert [a.text for a in panel.all("main .card-title a")] == ["E2E Test Park"], "Robin sees the site they belong to"
    assert panel.find("main .card-footer .badge").text == "author"
    stored_after = store.row("SELECT * FROM user WHERE email = ?", "robin.author@trail.local")
    assert stored_after["mustChangePassword"] == 0 and stored_after["passwordHash"] != stored["passwordHash"]

    panel.sign_out()
    panel.sign_in("robin.author@trail.local", one_time)
    assert panel.path() == "/login", "the one-time password worked once"
    assert panel.find("#login-error").is_displayed()
    panel.sign_in("robin.author@trail.local", "robins-own-password")
    assert panel.path() == "/sites"
    assert panel.driver.find_elements(By.CSS_SELECTOR, "a[href='/admin/users']") == [], "an author sees no admin menu"
