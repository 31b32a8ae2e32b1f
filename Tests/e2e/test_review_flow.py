"""Review and release in the browser, on a site that needs two approvals (`review_site` in conftest.py).

The author (the ranger, an author on that site) submits a ready tour with "Submit for review"; the request page
shows the build's progress, then "Waiting for review"; two reviewers, each told by the badge on the menu's Reviews
link, open it from the review queue and approve it; the author releases it, and the mobile API lists the package,
whose zip carries the uploaded file. Another submission is denied by one reviewer: the request ends, and the tour,
editable again, shows the comment.

Every step checks the page and what the server stored (SQLite, read-only; the management and mobile APIs)."""
import io
import json
import re
import urllib.request
import zipfile

from selenium.webdriver.common.by import By

from support import CAPTIONS, sha256_of, video_bytes, wait_for

FRAME = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
MIB = 1024 * 1024
PINNED_SHA = "0f3c" * 16  # the README picture shows a fixed hash and time, so it changes only when the page does
PINNED_TIME = "2026-06-01 09:00 UTC"


def ready_tour(api, site: str, name: str, asset: tuple[str, bytes]) -> tuple[dict, dict]:
    """A tour that can be submitted: a frame, two waypoints, one file the scanner found clean. Answers (tour, asset)."""
    tour = api.create_tour(site, name, frame=FRAME, description="Prairie flowers and a view of the Three Sisters.")
    first = api.add_waypoint(tour["id"], "Tombstone Pass", 44.395, -122.14, "The trail starts at the pass.")
    api.add_waypoint(tour["id"], "Prairie Overlook", 44.405, -122.09, "Look east to the Three Sisters.")
    file_name, body = asset
    uploaded = api.upload(tour["id"], first["id"], file_name, body)
    assert api.scanned_asset(uploaded["id"])["scanStatus"] == "clean"
    return api.tour(tour["id"]), uploaded


def mobile(server, path: str):
    """The mobile API, as an app calls it: no token."""
    with urllib.request.urlopen(f"{server.base_url}/api/v1{path}", timeout=30) as response:
        body = response.read()
        return json.loads(body) if response.headers.get_content_type() == "application/json" else body


def submit_for_review(panel, tour_id: int) -> str:
    """The author presses "Submit for review" on the tour page; answers the new request's id."""
    panel.open(f"/tours/{tour_id}")
    publish = panel.find("#publish")
    assert "The tour is ready." in publish.text and not panel.all("#publish-checklist")
    button = publish.find_element(By.CSS_SELECTOR, "form[action$='/publish'] button[type=submit]")
    assert button.text == "Submit for review"
    panel.submit(button)
    match = re.fullmatch(r"/requests/([0-9a-f-]+)", panel.path())
    assert match, f"submitting led to {panel.path()}"
    assert panel.notice() == "Submitted. The package is being built; reviewers will be asked once it is ready."
    return match.group(1)


def wait_state(panel, label: str, timeout: float = 60) -> None:
    """Waits until the request page shows a state, without reloading it ourselves (the page does while it builds)."""
    def shown(driver):
        try:
            return driver.execute_script("return document.readyState === 'complete' && document.getElementById('request-state')?.textContent") == label
        except Exception:  # between two documents
            return False
    panel.wait(timeout).until(shown)


def open_from_queue(panel, tour_name: str, request_id: str) -> None:
    """The reviewer follows the menu's Reviews link, finds the request in the queue, and opens it."""
    panel.submit(panel.find("nav a[href='/reviews']"))
    assert panel.path() == "/reviews"
    link = panel.find(f"main table a[href='/requests/{request_id}']")
    assert link.text == tour_name
    panel.submit(link)
    assert panel.path() == f"/requests/{request_id}"


def queue_row(panel, request_id: str) -> str:
    return panel.find(f"main table a[href='/requests/{request_id}']").find_element(By.XPATH, "./ancestor::tr").text


def badge_count(panel) -> int:
    """The number on the menu's Reviews link (0 when it shows none)."""
    badge = panel.review_badge()
    assert badge != "0", "no badge rather than a zero"
    return int(badge or 0)


def reviews_of(store, request_id: str) -> list[tuple[str, str, str]]:
    return [(r["email"], r["decision"], r["comment"] or "") for r in store.rows(
        "SELECT user.email, review.decision, review.comment FROM review JOIN user ON user.id = review.reviewerId "
        "WHERE requestId = ? ORDER BY review.createdAt", request_id)]


def test_two_reviewers_approve_and_the_author_releases(panel, ranger, reviewers, review_site, api, store, server):
    rosa, sam = reviewers
    video = video_bytes(40 * MIB, seed=21)  # past the builder's 32 MiB progress step
    tour, asset = ready_tour(api, review_site, "Tombstone Prairie", ("prairie-welcome.mp4", video))

    # The author submits: the request page shows the package being built...
    panel.sign_in(ranger.email, ranger.password)
    request_id = submit_for_review(panel, tour["id"])
    assert panel.text("#request-state") == "Building package"
    progress = panel.find("#build-progress [role=progressbar]")
    assert progress.get_attribute("aria-label") == "Build progress" and 0 <= int(progress.get_attribute("aria-valuenow")) <= 100
    done, total = map(int, re.match(r"(\d+) of (\d+) files, ", panel.text("#build-progress-text")).groups())
    assert total == 2 and done <= total  # the video and its captions
    # ...(the page polls and reloads when the build ends; it is held still while the API is watched and axe runs)...
    panel.driver.execute_script("for (let id = 1; id < 10000; id++) clearInterval(id)")
    seen = []
    wait_for("the build", lambda: (r := api.publish_request(request_id))["state"] != "building" or seen.append(r["progress"]), timeout=120)
    assert all(p["filesDone"] <= p["filesTotal"] == 2 and p["bytesDone"] <= p["bytesTotal"] == len(video) + len(CAPTIONS) for p in seen), seen
    panel.assert_accessible("request page, building")
    # ...and, its script running again, reloads by itself into "Waiting for review".
    panel.driver.execute_script("import('/static/js/request-page.js?again')")
    wait_state(panel, "Waiting for review")
    assert panel.text("#approval-count") == "0 of 2"
    assert not panel.all("#build-progress")
    assert re.fullmatch(r"[0-9a-f]{64}", panel.text("#package-sha"))
    assert "prairie-welcome.mp4: clean" in panel.text("#scan-report")
    assert not panel.all("#approve-form") and not panel.all("#deny-form"), "the author cannot review their own request"
    stored = store.publish_request(request_id)
    assert (stored["state"], stored["requiredApprovals"], stored["version"]) == ("pending", 2, 1)
    assert stored["authorId"] == store.row("SELECT id FROM user WHERE email = ?", ranger.email)["id"]
    assert panel.text("#package-sha") == stored["zipSha256"]
    panel.assert_accessible("request page, waiting for review (author)", media=False)
    panel.open(f"/tours/{tour['id']}")
    assert panel.find(f"#locked-banner a[href='/requests/{request_id}']")
    assert panel.find("#frame-form fieldset").get_attribute("disabled") is not None, "the tour is locked while in review"
    panel.assert_accessible("tour page, locked in review")
    panel.sign_out()

    # The first reviewer: the menu shows one request waiting; the queue lists it; they approve it.
    panel.sign_in(rosa.email, rosa.password)
    waiting = badge_count(panel)
    assert waiting >= 1
    open_from_queue(panel, "Tombstone Prairie", request_id)
    panel.open("/reviews")
    row = queue_row(panel, request_id)
    assert "your review" in row and "Review Test Park" in row and ranger.name in row and "0 of 2" in row, row
    assert len(panel.all("main table .badge")) == waiting, "the badge counts the requests marked “your review”"
    panel.assert_accessible("review queue with a request")
    open_from_queue(panel, "Tombstone Prairie", request_id)
    assert panel.find("#approve-form").is_displayed() and panel.find("#deny-form").is_displayed()
    assert panel.find("video").get_attribute("src").endswith(f"/requests/{request_id}/assets/0")
    panel.assert_accessible("request page, reviewer", media=False)
    panel.submit_form("#approve-form", comment="Walked it on Saturday; the video matches the trail.")
    assert panel.notice() == "Approved."
    assert panel.text("#request-state") == "Waiting for review" and panel.text("#approval-count") == "1 of 2"
    assert f"approved {rosa.name}" in panel.text("#review-list") and "Walked it on Saturday" in panel.text("#review-list")
    assert not panel.all("#approve-form"), "one approval per reviewer"
    assert badge_count(panel) == waiting - 1, "one request fewer is waiting for this reviewer"
    assert reviews_of(store, request_id) == [(rosa.email, "approve", "Walked it on Saturday; the video matches the trail.")]
    assert store.publish_request(request_id)["state"] == "pending"
    panel.assert_accessible("request page, approved once", media=False)
    panel.sign_out()

    # The second reviewer: the README's picture of the review page, then the approval that makes it ready.
    panel.sign_in(sam.email, sam.password)
    waiting = badge_count(panel)
    assert waiting >= 1
    open_from_queue(panel, "Tombstone Prairie", request_id)
    assert "1 of 2" in panel.text("#approval-count")
    pinned = panel.driver.execute_script("""
        document.getElementById('package-sha').textContent = arguments[0];
        const times = [...document.querySelectorAll('#review-list .text-muted')];
        times.forEach((t) => { t.textContent = arguments[1]; });
        return times.length;""", PINNED_SHA, PINNED_TIME)
    assert pinned == 1
    panel.wait_map_rendered()
    panel.settle_media()
    panel.screenshot("review")
    panel.open(f"/requests/{request_id}")
    panel.submit(panel.find("#approve-form button[type=submit]"))
    assert panel.notice() == "Approved. The request has all the approvals it needs and can be released."
    assert panel.text("#request-state") == "Approved, ready to release" and panel.text("#approval-count") == "2 of 2"
    assert not panel.all("#push-button"), "only the author or a manager releases"
    assert badge_count(panel) == waiting - 1
    assert store.publish_request(request_id)["state"] == "ready"
    assert [(email, decision) for email, decision, _ in reviews_of(store, request_id)] == [(rosa.email, "approve"), (sam.email, "approve")]
    panel.open("/reviews")
    assert not panel.all(f"main table a[href='/requests/{request_id}']"), "a ready request leaves the queue"
    panel.assert_accessible("review queue after the approvals")
    panel.sign_out()

    # The author releases it.
    panel.sign_in(ranger.email, ranger.password)
    panel.open(f"/tours/{tour['id']}")
    panel.submit(panel.find(f"#publish a[href='/requests/{request_id}']"))
    assert panel.text("#request-state") == "Approved, ready to release"
    push = panel.find("#push-button")
    assert push.text == "Release version 1"
    panel.assert_accessible("request page, ready to release (author)", media=False)
    panel.submit(push)
    package_id = store.publish_request(request_id)["packageId"]
    # Released from the request page, the author lands on the tour's publishing card: the visitor link, the QR code
    # and the notice in view.
    assert panel.path() == f"/tours/{tour['id']}#publish", panel.path()
    link = panel.find("#publish a[data-visitor-link]")
    assert link.text.endswith(f"/visit/{package_id}")
    notice = panel.find("#publish [data-flash-notice]")
    assert notice.text.startswith("Version 1 released: the mobile apps can download it now")
    for element in (link, panel.find("#publish img[data-qr]"), notice):
        assert panel.driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight", element), \
            f"{panel.describe(element)} is out of view"
    panel.assert_accessible("tour page after a release")
    panel.open(f"/packages/{package_id}")
    assert panel.find("a[data-visitor-link]").text.endswith(f"/visit/{package_id}"), "the package page shows the link too"
    assert panel.text("#package-visibility") == "published"
    assert "served" in panel.text("main table tbody tr")
    panel.assert_accessible("package page")
    assert store.publish_request(request_id)["state"] == "published"
    version = store.row("SELECT * FROM packageVersion WHERE packageId = ? AND version = 1", package_id)
    assert version and version["sha256"] == stored["zipSha256"]

    # The mobile API lists it; the zip it serves carries the very file that was uploaded.
    [listed] = [p for p in mobile(server, f"/sites/{review_site}/packages") if p["id"] == package_id]
    assert (listed["name"], listed["version"], listed["sha256"]) == ("Tombstone Prairie", 1, version["sha256"])
    zip_bytes = mobile(server, f"/packages/{package_id}/download")
    assert len(zip_bytes) == listed["size"] and sha256_of(zip_bytes) == listed["sha256"]
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as package:
        manifest = json.loads(package.read("manifest.json"))
        [shipped] = manifest["waypoints"][0]["assets"]
        assert (shipped["type"], shipped["size"], shipped["sha256"]) == ("video", len(video), sha256_of(video))
        assert sha256_of(package.read(shipped["path"])) == asset["sha256"] == sha256_of(video)
        assert package.read(shipped["captions"]["path"]) == CAPTIONS and shipped["captions"]["sha256"] == sha256_of(CAPTIONS)
    assert [w["name"] for w in manifest["waypoints"]] == ["Tombstone Pass", "Prairie Overlook"]


def test_one_denial_sends_the_tour_back_with_the_comment(panel, ranger, reviewers, review_site, api, store, server):
    rosa, sam = reviewers
    notes = "# Iron Mountain Lookout\n\nThe lookout is staffed in summer.\n".encode()
    tour, _ = ready_tour(api, review_site, "Iron Mountain Lookout", ("lookout-notes.md", notes))

    panel.sign_in(ranger.email, ranger.password)
    request_id = submit_for_review(panel, tour["id"])
    wait_state(panel, "Waiting for review")
    panel.sign_out()

    # A denial needs a comment.
    panel.sign_in(rosa.email, rosa.password)
    open_from_queue(panel, "Iron Mountain Lookout", request_id)
    panel.submit(panel.find("#deny-form button[type=submit]"))
    assert panel.find("#deny-comment").get_attribute("class").split().count("is-invalid") == 1
    assert panel.text("#deny-form .invalid-feedback")
    assert panel.text("#request-state") == "Waiting for review"
    assert reviews_of(store, request_id) == [] and store.publish_request(request_id)["state"] == "pending"
    panel.assert_accessible("request page, denial without a comment")

    # One denial is enough, though the site needs two approvals.
    comment = "The lookout is closed this season: say so at the first waypoint."
    panel.submit_form("#deny-form", comment=comment)
    assert panel.notice() == "Denied. The tour is editable again and shows your comment."
    assert panel.text("#request-state") == "Denied"
    assert comment in panel.text("#denial-comment")
    assert not panel.all("#approve-form") and not panel.all("#deny-form") and not panel.all("#push-button")
    assert reviews_of(store, request_id) == [(rosa.email, "deny", comment)]
    assert store.publish_request(request_id)["state"] == "denied"
    panel.assert_accessible("request page, denied")
    panel.sign_out()

    # The other reviewer has nothing left to do.
    panel.sign_in(sam.email, sam.password)
    panel.open("/reviews")
    assert not panel.all(f"main table a[href='/requests/{request_id}']")
    assert badge_count(panel) == len(panel.all("main table .badge")), "the badge counts what is left in the queue"
    panel.sign_out()

    # The author finds the tour editable again, with the comment.
    panel.sign_in(ranger.email, ranger.password)
    panel.open(f"/tours/{tour['id']}")
    assert comment in panel.text("#review-comment")
    assert not panel.all("#locked-banner")
    assert panel.find("#frame-form fieldset").get_attribute("disabled") is None
    assert panel.find("#publish form[action$='/publish'] button[type=submit]").text == "Submit for review"
    stored = store.tour(tour["id"])
    assert (stored["state"], stored["reviewComment"]) == ("draft", comment)
    panel.assert_accessible("tour page with a review comment")
    assert "Iron Mountain Lookout" not in [p["name"] for p in mobile(server, f"/sites/{review_site}/packages")]
