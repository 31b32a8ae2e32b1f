"""A newcomer's first tour, built from scratch and counted: a fresh server started as the README starts it (`--demo`,
admins must use two-step sign-in, email through a real SMTP server on loopback). After the first admin's first
sign-in (counted apart), the path a new user takes: a new site, a reviewer invited by email from the site's page, a
new tour from the site's page, its frame typed (it becomes the site's home area), four stops each with a name and a
description written in the map's form, a picture and an audio clip attached there, the picture's alt text and the
clip's transcript in the stop's panel beside the map, the submission; the reviewer joins from the emailed link,
approves from the "review requested" email; the admin follows the "approved" email's link and releases, ending on
the publishing card with the visitor link and the QR code in view. The QR code is read back by ZBar's `zbarimg`.

Two browsers, one per person. The test counts clicks (a followed email link, Enter on a form and choosing a file
count as one each), typed fields (a chosen option counts as one) and full page loads (every navigation: a typed
address, a link from an email, a form sent; a page-load marker on `window` tells them apart from in-page changes),
and times the path. It fails past 30 clicks, 22 typed fields or 12 page loads, or on any page load while the stops
get their text and files. BENCHMARKS.md keeps its current figures; by hand, a newcomer took 51 clicks, 22 typed
fields and 37 page loads."""
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

from support import ADMIN_EMAIL, Panel, REPO, Server, Store, chrome, png_bytes, wait_for, write_signatures

REVIEWER = "rosa.newcomer@agency.gov"


class Person:
    """One person's browser, with their tally."""

    def __init__(self, panel: Panel, name: str):
        self.panel, self.name = panel, name
        self.clicks = self.fields = self.loads = 0

    def go(self, path_or_url: str) -> None:
        """A typed address: one page load."""
        self.panel.driver.get(path_or_url if path_or_url.startswith("http") else self.panel.url(path_or_url))
        self.panel.wait_ready()
        self.loads += 1
        self.mark()

    def follow(self, url: str) -> None:
        """A link in an email, clicked in the mail program: one click, one page load."""
        self.clicks += 1
        self.go(url)

    def type(self, css: str, text: str) -> None:
        self.fill(self.panel.find(css), text)

    def fill(self, element, text: str) -> None:
        self.panel.fill(element, text)
        self.fields += 1

    def choose(self, select_css: str, value: str) -> None:
        """An option of a list: one field."""
        self.panel.find(f"{select_css} option[value='{value}']").click()
        self.fields += 1

    def mark(self) -> None:
        self.panel.driver.execute_script("window.__newcomerMarker = 1")

    def count_load(self) -> None:
        """Counts a page load the marker missed (none expected where this is called), and marks the page."""
        if self.panel.driver.execute_script("return window.__newcomerMarker !== 1"):
            self.loads += 1
        self.mark()

    def press(self, target) -> None:
        """A click on a link or a form's button (a CSS selector or the element) that loads the next page."""
        self.panel.submit(self.panel.find(target) if isinstance(target, str) else target)
        self.clicks += 1
        self.loads += 1
        self.mark()


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

        first_sign_in = (admin.clicks, admin.fields, admin.loads)
        admin.clicks = admin.fields = admin.loads = 0
        admin.mark()

        # A new site, from the sites page the first sign-in ends on.
        admin.type("#quick-site-name", "Canyon Rim District")
        admin.press("form[data-quick-site] button[type=submit]")
        site_path = admin.panel.path()
        assert site_path == "/sites/canyon-rim-district", site_path

        # A reviewer invited by email, from the site's page.
        admin.type("#quick-member-email", REVIEWER)
        admin.choose("#quick-member-role", "reviewer")
        admin.press("form[data-quick-member] button[type=submit]")
        assert "invitation to join as reviewer is on its way" in admin.panel.notice(), admin.panel.text("main")

        # The reviewer, while the admin goes on: the emailed link, a name and a password, and they are in.
        invite = server_work(lambda: mail.link(REVIEWER, "You are invited", r"http://\S+/invite/\S+"))
        reviewer.follow(invite)
        reviewer.type("#displayName", "Rosa Newcomer")
        reviewer.type("#password", "rosa-newcomer-password-1")
        reviewer.type("#confirmPassword", "rosa-newcomer-password-1")
        reviewer.press("form[action^='/invite/'] button[type=submit]")
        assert not reviewer.panel.path().startswith("/invite/"), reviewer.panel.text("main")

        # A new tour, from the site's page, and its frame typed (the map follows; saved with one click).
        admin.type("#quick-tour-name", "Canyon Rim Springs")
        admin.press("form[data-quick-tour] button[type=submit]")
        tour_path = admin.panel.path().split("#")[0]
        tour_id = int(tour_path.split("/")[2])
        for key, value in {"north": "38.50", "south": "38.43", "east": "-109.50", "west": "-109.62"}.items():
            admin.type(f"#{key}", value)
        admin.press("#frame-form button[type=submit]")

        # Four stops, each written in the map's form; the first gets a picture, the second an audio clip.
        loads_before_stops = admin.loads
        picture, clip = tmp_path / "rim.png", tmp_path / "spring.wav"
        picture.write_bytes(png_bytes())
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                        str(clip)], check=True, timeout=60)
        from test_first_tour import frame_point
        stops = [("Rim Overlook", 0.25, 0.3), ("Hidden Spring", 0.45, 0.7), ("Fern Alcove", 0.65, 0.3), ("Slickrock Pool", 0.8, 0.7)]
        for number, (name, fx, fy) in enumerate(stops, 1):
            admin.panel.click_map_at(*frame_point(admin.panel, fx, fy)); admin.clicks += 1
            form = admin.panel.visible("#tour-map form[data-new-waypoint]")
            admin.fill(form.find_element(By.NAME, "name"), name)
            admin.fill(form.find_element(By.NAME, "description"), f"What {name} tells the walker.")
            if number in (1, 2):
                form.find_element(By.CSS_SELECTOR, "input[type='file']").send_keys(str(picture if number == 1 else clip))
                admin.clicks += 1
            form.find_element(By.CSS_SELECTOR, "button[type='submit']").click(); admin.clicks += 1
            admin.panel.wait().until(lambda d: len(admin.panel.waypoint_rows()) == number)
        store = Store(server.data / "trail.sqlite")
        waypoints = store.waypoints(tour_id)
        server_work(lambda: wait_for("both files scanned", lambda: [a["scanStatus"] for w in waypoints[:2] for a in store.assets(w["id"])]
                                     == ["clean", "clean"], timeout=120))
        image, audio = store.assets(waypoints[0]["id"])[0], store.assets(waypoints[1]["id"])[0]

        # The picture's alt text and the clip's transcript, in the stop's panel beside the map; "next stop" saves.
        admin_driver.execute_script("document.getElementById('tour-map').scrollIntoView({block: 'start', behavior: 'instant'})")
        admin.panel.find(f"#tour-map [data-waypoint-id='{waypoints[0]['id']}']").click(); admin.clicks += 1
        admin.fill(admin.panel.visible(f"fieldset[data-asset-id='{image['id']}'] textarea[name='altText']"), "Red cliffs over a canyon.")
        admin.panel.find("form[data-edit-waypoint] [data-action='next-waypoint']").click(); admin.clicks += 1
        admin.fill(admin.panel.visible(f"fieldset[data-asset-id='{audio['id']}'] textarea[name='transcript']"),
                   "Listen: water drips from the fern wall into the spring.")
        admin.panel.find("form[data-edit-waypoint] button[type='submit']").click(); admin.clicks += 1
        admin.panel.wait(30).until(lambda d: store.assets(waypoints[0]["id"])[0]["altText"] == "Red cliffs over a canyon."
                                   and store.row("SELECT COUNT(*) AS n FROM asset WHERE waypointId = ? AND companionRole = 'transcript'",
                                                 waypoints[1]["id"])["n"] == 1)
        admin.count_load()
        stop_loads = admin.loads - loads_before_stops
        assert stop_loads == 0, "the stops' texts and files loaded a page"
        assert [(w["name"], w["description"]) for w in store.waypoints(tour_id)] == [(n, f"What {n} tells the walker.") for n, _, _ in stops]

        # Submitted from the publishing card the page keeps current.
        admin.press(f"[data-publishing] form[action='/tours/{tour_id}/publish'] button[type=submit]")
        assert store.tour(tour_id)["state"] != "draft", admin.panel.text("#publish")

        # The reviewer approves from the "review requested" email, once the package is built (as a person reading
        # their mail later would find it).
        review = server_work(lambda: mail.link(REVIEWER, "Review requested", r"http://\S+/requests/\S+"))
        request_id = review.rsplit("/", 1)[1]
        server_work(lambda: wait_for("the package build", lambda: store.publish_request(request_id)["state"] != "building",
                                     timeout=180))
        assert store.publish_request(request_id)["state"] == "pending", store.publish_request(request_id)
        reviewer.follow(review)
        reviewer.press("#approve-form button[type=submit]")
        request_path = f"/requests/{request_id}"

        # The admin follows the "approved" email's link to the tour's publishing card and releases there.
        approved = server_work(lambda: mail.link(ADMIN_EMAIL, "Approved", r"http://\S+/tours/\S+"))
        admin.follow(approved)
        admin.press('[data-action="release"]')
        assert admin.panel.path() == f"/tours/{tour_id}#publish", admin.panel.path()
        visitor_link = admin.panel.find("#publish a[data-visitor-link]")
        qr = admin.panel.find("#publish img[data-qr]")
        link = visitor_link.get_attribute("href")
        assert "/visit/" in link
        admin.panel.wait().until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", qr) > 0)
        for element in (visitor_link, qr):
            assert admin_driver.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight", element), \
                "the visitor link and the QR code are in view where the release lands"
        admin.panel.assert_accessible("tour page after the release from the approved email")
        home = Store(server.data / "trail.sqlite").row("SELECT homeNorth FROM site WHERE slug = 'canyon-rim-district'")
        assert home is not None
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
    print(f"\n[newcomer path, from scratch] {total:.1f} s in all, {total - waited:.1f} s in the browsers, {waited:.1f} s waiting "
          f"for the server's background work; clicks: {clicks} (admin {admin.clicks}, reviewer {reviewer.clicks}), typed fields: "
          f"{fields}, page loads: {loads} (admin {admin.loads}, reviewer {reviewer.loads}), of which for the four stops: "
          f"{stop_loads}; the first sign-in apart: {first_sign_in[0]} clicks, {first_sign_in[1]} typed fields, "
          f"{first_sign_in[2]} page loads")
    assert clicks <= 30, f"{clicks} clicks"
    assert fields <= 22, f"{fields} typed fields"
    assert loads <= 12, f"{loads} page loads"
