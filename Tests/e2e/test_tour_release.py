"""Release and sharing from the tour page, and the error summary of a refused form.

The ranger (a manager of the suite's site, which needs one approval) submits a ready tour; the admin approves it
through the management API; the ranger then releases it with the tour page's own button and finds there the
visitor link and its QR code, which an independent reader (ZBar's `zbarimg`) decodes to that link, and the print
kit's sign and booklet. The server of the suite answers on 127.0.0.1 without --public-url, so the page warns that
phones cannot reach the link, and the print files are proofs marked DRAFT.

A refused form (the tour page's waypoint and frame forms, the two-step code page) puts the list of its errors at the
top of the page and the focus on it; its links lead to the fields.
The rangers' guide fits a phone's width with its screenshots."""
import secrets
import subprocess
import time
import urllib.request

import pyotp
from selenium.webdriver.common.by import By

from support import set_viewport, video_bytes, wait_for
from test_review_flow import ready_tour, submit_for_review

MIB = 1024 * 1024


def download(panel, href: str) -> bytes:
    """A file of the panel fetched with the browser's own session cookie, as its download link would."""
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in panel.driver.get_cookies())
    request = urllib.request.Request(panel.url(href) if href.startswith("/") else href, headers={"Cookie": cookies})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        return response.read()


def test_release_on_the_tour_page_then_share_the_link_and_qr_code(ranger_panel, api, e2e_site, server, tmp_path):
    panel = ranger_panel
    tour, _ = ready_tour(api, e2e_site, "Lookout Loop", ("lookout.mp4", video_bytes(MIB, seed=31)))
    request_id = submit_for_review(panel, tour["id"])
    wait_for("the build", lambda: api.publish_request(request_id)["state"] == "pending", timeout=120)

    # Waiting for its approval: nothing to release yet.
    panel.open(f"/tours/{tour['id']}")
    assert not panel.all('[data-action="release"]') and not panel.all("a[data-visitor-link]")

    api.post(f"/manage/publish-requests/{request_id}/approve", {"comment": "Looks good."})
    assert api.publish_request(request_id)["state"] == "ready"
    panel.open(f"/tours/{tour['id']}")
    button = panel.find('[data-action="release"]')
    assert button.text == "Release version 1"
    assert not panel.all("#publish form[action$='/publish']"), "no second submission while one waits for release"
    panel.submit(button)

    # Back on the tour page, now published: the visitor link, the QR code and its downloads.
    assert panel.path() == f"/tours/{tour['id']}#publish"
    assert panel.notice().startswith("Version 1 released")
    assert api.publish_request(request_id)["state"] == "published"
    package_id = api.publish_request(request_id)["packageId"]
    link = panel.find("a[data-visitor-link]").get_attribute("href")
    assert link == f"{server.base_url}/visit/{package_id}"
    qr = panel.find("img[data-qr]")
    panel.wait().until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", qr) > 0)
    png = download(panel, panel.find('a[data-qr-download="png"]').get_attribute("href"))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    svg = download(panel, panel.find('a[data-qr-download="svg"]').get_attribute("href"))
    assert svg.startswith(b"<svg")
    (tmp_path / "qr.png").write_bytes(png)
    decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(tmp_path / "qr.png")], capture_output=True, text=True, timeout=60)
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout.strip() == link

    # 127.0.0.1 is loopback: the page says phones cannot reach it and which setting to change.
    warning = panel.find('[data-warning="public-url"]')
    assert "phones cannot reach" in warning.text and "--public-url" in warning.text
    # Beside them, the print kit: proofs marked DRAFT while the address is loopback, made as PDF by the server.
    sign = panel.find('a[data-print="sign"]').get_attribute("href")
    booklet = panel.find('a[data-print="booklet"]').get_attribute("href")
    assert sign.endswith(f"/tours/{tour['id']}/print/sign.pdf?draft=1") and booklet.endswith(f"/tours/{tour['id']}/print/booklet.pdf?draft=1")
    for href in (sign, booklet):
        pdf = download(panel, href)
        assert pdf.startswith(b"%PDF-"), href
        (tmp_path / "print.pdf").write_bytes(pdf)
        text = subprocess.run(["pdftotext", str(tmp_path / "print.pdf"), "-"], capture_output=True, text=True, timeout=60).stdout
        assert "Lookout Loop" in text and "DRAFT" in text, href
    # Unchanged since its release: no "Submit for review".
    assert not panel.all("#publish form[action$='/publish']")
    assert panel.find("#unchanged-since-release").is_displayed()
    panel.assert_accessible("tour page, released")

    # The link opens the visitor player.
    with urllib.request.urlopen(link, timeout=30) as response:
        assert response.status == 200


def focused_summary(panel) -> bool:
    return panel.driver.execute_script(
        "const s = document.querySelector('[data-error-summary]');"
        "return !!s && document.activeElement === s && s.getAttribute('role') === 'alert'")


def test_a_refused_form_focuses_the_error_summary(ranger_panel, api, e2e_site):
    panel = ranger_panel
    tour = api.create_tour(e2e_site, "Error Summary Walk", frame={"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2})
    panel.open(f"/tours/{tour['id']}")
    assert not panel.all("[data-error-summary]")

    # The waypoint form with no name and a latitude off the globe.
    panel.submit_form("#waypoint-form", name="", latitude="95", longitude="-122.1")
    panel.wait().until(lambda d: focused_summary(panel))
    summary = panel.find("[data-error-summary]")
    links = summary.find_elements(By.CSS_SELECTOR, "a")
    assert [a.get_attribute("hash") for a in links] == ["#wp-name", "#wp-latitude"]
    assert summary.location["y"] < panel.find("h1").location["y"], "the summary is at the top of the page"
    links[1].click()
    assert panel.driver.execute_script("return document.activeElement.id") == "wp-latitude"

    # The frame form with a zoom past 20.
    panel.open(f"/tours/{tour['id']}")
    panel.submit_form("#frame-form", maxZoom="25")
    panel.wait().until(lambda d: focused_summary(panel))
    assert [a.get_attribute("hash") for a in panel.find("[data-error-summary]").find_elements(By.CSS_SELECTOR, "a")] == ["#maxZoom"]
    panel.assert_accessible("tour page, refused frame")


def test_the_rangers_guide_fits_a_phone(ranger_panel):
    panel = ranger_panel
    set_viewport(panel.driver, 375, 812, mobile=True)
    panel.open("/help")
    images = panel.all(".help-guide img")
    assert images, "the guide has its screenshots"
    panel.wait().until(lambda d: all(d.execute_script("return arguments[0].complete", i) for i in images))
    width = panel.driver.execute_script("return document.documentElement.clientWidth")
    assert width == 375
    assert all(panel.in_view_horizontally(i) or not i.size["width"] for i in images if i.is_displayed())
    assert panel.horizontal_overflow() <= 0, "the guide scrolls sideways on a phone"


def test_a_refused_two_step_code_focuses_the_error_summary(panel, admin):
    """A user of their own (made by the admin, with two-step sign-in set up on their account page) so that no other
    scenario's account needs a code."""
    email, password = f"summary-{secrets.token_hex(4)}@trail.local", "e2e-" + secrets.token_urlsafe(12)
    panel.sign_in(admin.email, admin.password)
    one_time = panel.create_user(email, "Summary Tester")
    panel.sign_out()
    panel.sign_in(email, one_time)
    panel.change_password(one_time, password)
    panel.open("/account/two-step")
    panel.submit(panel.find("form[action='/account/two-step/start'] button[type=submit]"))
    totp = pyotp.TOTP(panel.text("#two-step-secret").replace(" ", ""))
    panel.submit_form("form[action='/account/two-step']", code=totp.now())
    panel.open("/sites")
    panel.sign_out()

    panel.sign_in(email, password)
    assert panel.path() == "/login/code"
    assert panel.driver.execute_script("return document.activeElement.id") == "code", "before an error the field has the focus"
    wrong = "000000" if totp.at(time.time()) != "000000" else "111111"
    panel.submit_form("form[action='/login/code']", code=wrong)
    panel.wait().until(lambda d: focused_summary(panel))
    link = panel.find("[data-error-summary] a")
    assert link.get_attribute("hash") == "#code" and "not right" in link.text
    link.click()
    assert panel.driver.execute_script("return document.activeElement.id") == "code"


def summary_links(panel) -> list[str]:
    return [a.get_attribute("hash") for a in panel.find("[data-error-summary]").find_elements(By.CSS_SELECTOR, "a")]


def test_every_refused_form_leads_with_its_errors(ranger_panel, e2e_site):
    """The forms whose pages have no summary of their own (the password, members and new-tour forms, and the sign-in
    form's one message) lead with one too: at the top, with the focus, each link to its field."""
    panel = ranger_panel
    panel.open("/account/password")
    panel.submit_form("form[action='/account/password']", currentPassword="not-my-password", newPassword="short", confirmPassword="other")
    panel.wait().until(lambda d: focused_summary(panel))
    links = summary_links(panel)
    assert links and set(links) <= {"#currentPassword", "#newPassword", "#confirmPassword"}, links
    assert panel.find("[data-error-summary]").location["y"] < panel.find("h1").location["y"]
    panel.find("[data-error-summary] a").click()
    assert panel.driver.execute_script("return '#' + document.activeElement.id") == links[0]
    panel.assert_accessible("password page, refused")

    panel.open(f"/sites/{e2e_site}/members")
    panel.submit_form("form[data-add-member]", email="not an address")
    panel.wait().until(lambda d: focused_summary(panel))
    assert summary_links(panel) == ["#member-email"], summary_links(panel)
    assert "/_csrf" not in panel.driver.current_url and "_csrf=" not in panel.driver.current_url

    panel.open(f"/sites/{e2e_site}/tours/new")
    panel.submit(panel.find("main form button[type=submit]"))
    panel.wait().until(lambda d: focused_summary(panel))
    assert summary_links(panel) == ["#name"], summary_links(panel)

    panel.sign_out()
    panel.sign_in("nobody@trail.local", "not-a-password-here")
    panel.wait().until(lambda d: focused_summary(panel))
    assert "not right" in panel.text("[data-error-summary]")
