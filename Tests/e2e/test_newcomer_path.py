"""A newcomer's whole path, timed: a fresh server started as the README starts it (`--demo`, admins must use two-step
sign-in, email through a real SMTP server on loopback), its first admin's first sign-in, a reviewer invited by email,
the demo tour submitted, the reviewer's approval from the emailed link, the release from the tour page, and the QR code
read back by ZBar's `zbarimg`.

Two browsers, one per person. The test counts clicks (Enter on a form counts as one), typed fields and full page loads
(every navigation: a typed address, a link from an email, a form sent), and times how long the path takes in all and
how much of it the browser spends, apart from the waits for the server's background work (the package build, the
outbox). It prints the figures (BENCHMARKS.md keeps them) and holds the path to them loosely, so that a change that
adds steps shows."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pyotp
import pytest
from selenium.webdriver.common.by import By

from support import ADMIN_EMAIL, Panel, REPO, Server, Store, chrome, wait_for, write_signatures

REVIEWER = "rosa.newcomer@agency.gov"


class Person:
    """One person's browser, with their tally."""

    def __init__(self, panel: Panel, name: str):
        self.panel, self.name = panel, name
        self.clicks = self.fields = self.loads = 0

    def go(self, path_or_url: str) -> None:
        """A typed address or a link followed from an email: one page load."""
        self.panel.driver.get(path_or_url if path_or_url.startswith("http") else self.panel.url(path_or_url))
        self.panel.wait_ready()
        self.loads += 1

    def type(self, css: str, text: str) -> None:
        self.panel.fill(self.panel.find(css), text)
        self.fields += 1

    def press(self, target) -> None:
        """A click on a link or a form's button (a CSS selector or the element) that loads the next page."""
        self.panel.submit(self.panel.find(target) if isinstance(target, str) else target)
        self.clicks += 1
        self.loads += 1


class Mailbox:
    """The SMTP sink's folder: one JSON file per message it accepted."""

    def __init__(self, folder: Path):
        self.folder = folder

    def messages(self, to: str) -> list[dict]:
        found = []
        for file in sorted(self.folder.glob("*.json")):
            message = json.loads(file.read_text())
            if to in message.get("rcpt_tos", []):
                found.append(message)
        return found

    def link(self, to: str, subject_start: str, pattern: str, timeout: float = 60) -> str:
        def arrived():
            return [m for m in self.messages(to) if m["subject"].startswith(subject_start)]
        wait_for(f"the email '{subject_start}…' to {to}", arrived, timeout=timeout)
        match = re.search(pattern, arrived()[-1]["body"])
        assert match, arrived()[-1]["body"]
        return match.group(0)


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory):
    folder = tmp_path_factory.mktemp("newcomer-mail")
    process = subprocess.Popen([sys.executable, str(REPO / "Tests/TrailServerTests/Scripts/smtp_sink.py"), "0", str(folder)],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        port = int(process.stdout.readline())
        yield port, Mailbox(folder)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def newcomer_server(mailbox, tmp_path_factory):
    port, _ = mailbox
    # As the README's start command runs it (the demo content, admins on two-step sign-in, malware signatures: here the
    # suite's test signature, where the start command fetches ClamAV's), with the two email settings an operator gives.
    signatures = write_signatures(tmp_path_factory.mktemp("newcomer-clamav"))
    server = Server(tmp_path_factory.mktemp("newcomer-data"), demo=True,
                    extra_args=("--clamav-db", str(signatures), "--require-two-step", "admins",
                                "--smtp-url", f"smtp://127.0.0.1:{port}",
                                "--mail-from", "Sweet Home Trails <trails@parks.example>"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_a_newcomers_whole_path_from_first_sign_in_to_the_qr_code(newcomer_server, mailbox, tmp_path):
    server, (_, mail) = newcomer_server, mailbox
    started = time.monotonic()
    waited = 0.0

    def server_work(work):
        """Background work of the server (the build, the outbox): timed apart from the browsers'."""
        nonlocal waited
        begin = time.monotonic()
        try:
            return work()
        finally:
            waited += time.monotonic() - begin

    admin_driver, reviewer_driver = chrome(), chrome()
    try:
        admin = Person(Panel(admin_driver, server), "admin")
        reviewer = Person(Panel(reviewer_driver, server), "reviewer")

        # The first admin: the one-time password from the start-up output, a second step set up, a password chosen.
        admin.go("/login")
        admin.type("#email", ADMIN_EMAIL)
        admin.type("#password", server.one_time_password)
        admin.press("main form button[type=submit]")
        assert admin.panel.path() == "/login/enrol", admin.panel.text("main")
        secret = admin.panel.text("#two-step-secret").replace(" ", "")
        admin.type("#code", pyotp.TOTP(secret).now())
        admin.press("main form button[type=submit]")
        admin.press("a.btn-primary")  # "I have saved them: continue" under the recovery codes
        assert admin.panel.path() == "/account/password", admin.panel.text("main")
        password = "newcomer-admin-password-1"
        admin.type("#currentPassword", server.one_time_password)
        admin.type("#newPassword", password)
        admin.type("#confirmPassword", password)
        admin.press("form[action='/account/password'] button[type=submit]")
        assert admin.panel.path() == "/sites", admin.panel.text("main")

        # The demo site, its members page, and a reviewer invited by email.
        admin.press("main a[href='/sites/sweet-home']")
        admin.press("a[href='/sites/sweet-home/members']")
        admin.type("#member-email", REVIEWER)
        admin.panel.find("#member-role option[value='reviewer']").click()
        admin.fields += 1
        admin.press("form[data-add-member] button[type=submit]")
        assert "invitation to join as reviewer is on its way" in admin.panel.notice(), admin.panel.text("main")

        # The reviewer: the emailed link, a name and a password, and they are in.
        invite = server_work(lambda: mail.link(REVIEWER, "You are invited", r"http://\S+/invite/\S+"))
        reviewer.go(invite)
        reviewer.type("#displayName", "Rosa Newcomer")
        reviewer.type("#password", "rosa-newcomer-password-1")
        reviewer.type("#confirmPassword", "rosa-newcomer-password-1")
        reviewer.press("form[action^='/invite/'] button[type=submit]")
        assert not reviewer.panel.path().startswith("/invite/"), reviewer.panel.text("main")

        # The admin, who manages the demo site, submits its tour for review.
        admin.press("main a[href='/sites/sweet-home']")
        admin.press(admin_driver.find_element(By.LINK_TEXT, "Santiam Wagon Road"))
        tour_path = admin.panel.path()
        admin.press("#publish form[action$='/publish'] button[type=submit]")

        # The reviewer: the emailed request, once its package is built, approved.
        review = server_work(lambda: mail.link(REVIEWER, "Review requested", r"http://\S+/requests/\S+"))
        reviewer.go(review)
        request_path = reviewer.panel.path()

        store = Store(server.data / "trail.sqlite")
        request_id = request_path.removeprefix("/requests/")
        server_work(lambda: wait_for("the package build", lambda: store.publish_request(request_id)["state"] != "building",
                                     timeout=180))
        assert store.publish_request(request_id)["state"] == "pending", store.publish_request(request_id)
        if not reviewer.panel.all("#approve-form button[type=submit]"):
            reviewer.go(request_path)  # the page was opened before the build ended: one reload
        reviewer.press("#approve-form button[type=submit]")

        # The admin releases from the tour page, and the visitor link and QR code are there.
        admin.go(tour_path)
        admin.press('[data-action="release"]')
        link = admin.panel.find("a[data-visitor-link]").get_attribute("href")
        assert "/visit/" in link
        qr = admin.panel.find("img[data-qr]")
        admin.panel.wait().until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", qr) > 0)
        total = time.monotonic() - started

        # The QR code, as a sign maker would take it (the PNG), reads back as the visitor link.
        from test_tour_release import download
        png = download(admin.panel, admin.panel.find('a[data-qr-download="png"]').get_attribute("href"))
        (tmp_path / "qr.png").write_bytes(png)
        decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(tmp_path / "qr.png")], capture_output=True, text=True, timeout=60)
        assert decoded.returncode == 0, decoded.stderr
        assert decoded.stdout.strip() == link
        assert request_path.startswith("/requests/")
    finally:
        admin_driver.quit()
        reviewer_driver.quit()

    clicks = admin.clicks + reviewer.clicks
    fields = admin.fields + reviewer.fields
    loads = admin.loads + reviewer.loads
    print(f"\n[newcomer path] {total:.1f} s in all, {total - waited:.1f} s in the browsers, {waited:.1f} s waiting for the server's "
          f"background work; clicks: {clicks} (admin {admin.clicks}, reviewer {reviewer.clicks}), typed fields: {fields}, "
          f"page loads: {loads} (admin {admin.loads}, reviewer {reviewer.loads})")
    assert clicks <= 20, f"{clicks} clicks"
    assert loads <= 25, f"{loads} page loads"
