"""The scanner notice for authors: on a server whose malware scanner has no signatures (an empty signature folder), an
author whose upload waits sees, on every page, why it stays "pending" and whom to ask; a colleague with nothing waiting
is not told about it. Its own server: the suite's shared one has signatures."""
from __future__ import annotations

import pytest

from support import Api, Panel, Server, chrome, png_bytes

PASSWORD = "notice-password-1"


@pytest.fixture(scope="module")
def unsigned_server(tmp_path_factory):
    empty = tmp_path_factory.mktemp("no-signatures")
    server = Server(tmp_path_factory.mktemp("notice-data"), demo=False, extra_args=("--clamav-db", str(empty)))
    try:
        server.start()
        server.cli("site", "create", "--slug", "falls", "--name", "Falls District")
        for email, role in (("alex.author@trail.local", "author"), ("rue.reviewer@trail.local", "reviewer")):
            server.cli("user", "create", "--email", email, "--name", email.split("@")[0], "--password", PASSWORD)
            server.cli("member", "add", "--site", "falls", "--email", email, "--role", role)
        yield server
    finally:
        server.stop()


def test_an_author_with_a_file_waiting_is_told_why_and_whom_to_ask(unsigned_server):
    server = unsigned_server
    author = Api(server.base_url, server.create_token("alex.author@trail.local", "notice"))
    tour = author.create_tour("falls", "Falls Loop", {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2})
    waypoint = author.add_waypoint(tour["id"], "Upper Falls", 44.40, -122.1)
    asset = author.upload(tour["id"], waypoint["id"], "falls.png", png_bytes())
    assert asset["scanStatus"] == "pending"

    driver = chrome()
    try:
        panel = Panel(driver, server)
        panel.sign_in("alex.author@trail.local", PASSWORD)
        for path in ("/sites", f"/tours/{tour['id']}"):
            panel.open(path)
            notice = panel.find('[data-notice="scanner"]')
            assert notice.is_displayed()
            text = notice.text
            assert "1 of your files waits for the malware scan" in text, text
            assert "no virus signatures" in text and "admin@trail.local" in text, text
        panel.assert_accessible("an author's page with the scanner notice")
        panel.sign_out()

        # The reviewer has no file waiting: nothing to tell them.
        panel.sign_in("rue.reviewer@trail.local", PASSWORD)
        panel.open("/sites")
        assert not panel.all('[data-notice="scanner"]')
    finally:
        driver.quit()


def test_visit_says_why_nothing_is_published_on_a_server_without_signatures(unsigned_server):
    """Day one on a network that blocks ClamAV's mirrors: a visitor (or the ranger checking the link) opening `/visit`
    learns why it is empty and what the operator does about it, instead of only "No tours are published yet"."""
    driver = chrome()
    try:
        panel = Panel(driver, unsigned_server)
        panel.open("/visit")
        assert "No tours are published yet." in panel.text("#visit-empty")
        waiting = panel.find("#visit-waiting")
        assert waiting.is_displayed()
        assert "malware scanner has no signatures yet" in waiting.text, waiting.text
        assert "--clamav-db" in waiting.text, "it says what to do"
        panel.assert_accessible("/visit waiting for signatures", media=False)
    finally:
        driver.quit()
