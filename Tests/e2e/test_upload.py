"""The uploader on a waypoint page: a large video over tus with the network cut midway, several files at once, a
dropped file the scanner rejects, and a cancelled upload.

Each scenario checks what the page shows (the rows, their bars and messages, the asset list) and what the server
stored: the asset rows (SQLite, read-only) and the management API, the stored file's SHA-256 against the file
that was chosen, the tus upload rows and files. The server scans with a real libclamav engine and an EICAR test
signature (see conftest.py), so `clean` and `infected` are real verdicts. Chrome's DevTools network emulation
throttles the uploads (so that they take a few seconds on loopback) and cuts the network."""
import re

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By

from support import (EICAR, EICAR_SIGNATURE_NAME, png_bytes, sha256_of, video_bytes, wait_for, write_video)

FRAME = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
MIB = 1024 * 1024
VIDEO_SIZE = 36 * MIB
RATE = 6 * MIB  # bytes per second while throttled: the video takes about six seconds


@pytest.fixture(scope="module")
def upload_tour(api, e2e_site) -> dict:
    return api.create_tour(e2e_site, "Fish Lake Loop", frame=FRAME, description="A short loop around Fish Lake.")


def asset_statuses(panel) -> dict[str, str]:
    """{file name: scan status} of the asset list; {} while the page is between two documents."""
    try:
        return {item.find_element(By.CSS_SELECTOR, ".asset-name").text: item.find_element(By.CSS_SELECTOR, ".asset-status").text
                for item in panel.driver.find_elements(By.CSS_SELECTOR, "#asset-list > li")}
    except (NoSuchElementException, StaleElementReferenceException, WebDriverException):
        return {}


def wait_statuses(panel, expected: dict[str, str], timeout: float = 60) -> None:
    """Waits until the asset list (which reloads itself while files are sent and scanned) shows these statuses."""
    try:
        panel.wait(timeout).until(lambda d: asset_statuses(panel) == expected)
    except Exception:
        raise AssertionError(f"the asset list never showed {expected}: {asset_statuses(panel)}") from None
    panel.wait_ready()


def row_history(panel, name: str) -> list[dict]:
    """The recorded states of one upload row, in order."""
    return [dict(row, t=entry["t"]) for entry in panel.upload_history() for row in entry["rows"] if row["name"] == name]


def assert_grows(widths: list[float], label: str) -> None:
    assert widths == sorted(widths), f"{label}: the bar went backwards: {widths}"


def drain_console(panel, allowed: re.Pattern) -> list[str]:
    """Takes the browser console's error entries so far; every one must match `allowed` (what the test provoked)."""
    from support import console_errors
    errors = console_errors(panel.driver)
    unexpected = [e for e in errors if not allowed.search(e)]
    assert not unexpected, "unexpected errors in the browser console:\n" + "\n".join(unexpected)
    return errors


def test_a_video_upload_survives_a_network_cut(ranger_panel, upload_tour, api, store, server, tmp_path):
    panel = ranger_panel
    waypoint = api.add_waypoint(upload_tour["id"], "Fish Lake", 44.40, -122.02, "The lake drowned a forest.")
    video = write_video(tmp_path / "fish-lake-intro.mp4", VIDEO_SIZE)
    expected_sha = sha256_of(video)
    panel.open(f"/tours/{upload_tour['id']}/waypoints/{waypoint['id']}")
    assert "No files yet." in panel.text("main")
    assert not panel.upload_rows()
    # With scripts a chosen file uploads at once: no Upload button suggests a second step.
    assert not panel.find("#upload-submit").is_displayed()
    assert "Uploading starts as soon as you choose or drop a file." in panel.text("#upload-help")

    # Choose the file: a row with its bar appears and the bar grows.
    panel.record_uploads()
    panel.network(upload_bytes_per_second=RATE)
    panel.find("#upload-files").send_keys(str(video))
    row = panel.wait_upload_row(video.name, lambda r: r["width"] >= 10, "10 %")
    assert row["cancel"], "an upload in progress can be cancelled"
    assert re.fullmatch(r"\d+ % \(\d+\.\d MiB of 36\.0 MiB\)", row["status"]), row["status"]
    bar = panel.find("#upload-progress [role=progressbar]")
    assert bar.get_attribute("aria-label") == f"Upload of {video.name}"
    assert bar.find_element(By.CSS_SELECTOR, ".progress-bar").is_displayed()
    panel.assert_accessible("waypoint page, upload in progress")

    # Midway, the network goes: the row says so and the uploader waits longer after each failed attempt.
    panel.wait_upload_row(video.name, lambda r: r["width"] >= 30, "30 %", timeout=30)
    panel.network(offline=True)
    lost = panel.wait_upload_row(video.name, lambda r: r["status"].startswith("Connection lost"), "the lost connection")
    assert lost["status"] == "Connection lost — retrying in 1 s…"
    assert not lost["failed"] and not lost["done"] and lost["cancel"]
    panel.wait_upload_row(video.name, lambda r: r["status"] == "Connection lost — retrying in 2 s…", "a second failed attempt")
    # The server kept what arrived before the cut.
    [kept] = store.uploads(waypoint["id"])
    assert kept["length"] == VIDEO_SIZE and 0 < kept["offset"] < VIDEO_SIZE, kept
    assert (server.data / "uploads" / kept["id"]).stat().st_size == kept["offset"]
    assert not store.assets(waypoint["id"])
    panel.assert_accessible("waypoint page, connection lost")
    # The only console errors are the requests the cut refused.
    assert drain_console(panel, re.compile(r"/api/v1/manage/uploads/\S+ - Failed to load resource: net::ERR_INTERNET_DISCONNECTED"))

    # The network comes back: the upload goes on from what the server has, to the end.
    panel.network(upload_bytes_per_second=RATE)
    wait_for("the upload to finish", lambda: any(r["done"] for r in row_history(panel, video.name)), timeout=60)
    history = row_history(panel, video.name)
    cut = next(i for i, r in enumerate(history) if r["status"].startswith("Connection lost"))
    back = next(i for i, r in enumerate(history) if i > cut and not r["status"].startswith("Connection lost"))
    before, after = [r["width"] for r in history[:cut]], [r["width"] for r in history[back:]]
    assert_grows(before, "before the cut")
    assert_grows(after, "after the cut")
    assert len(set(before)) >= 5, f"the bar grew in steps before the cut: {before}"
    assert before[-1] >= 30 and after[0] >= kept["offset"] * 100 // VIDEO_SIZE, \
        f"resumed from the server's offset ({kept['offset']} bytes), not from the start: {before[-3:]} → {after[:3]}"
    assert history[-1]["width"] == 100 and history[-1]["valueNow"] == "100"
    assert history[-1]["status"] == "Uploaded — scanning for malware…" and not history[-1]["cancel"]

    # The page reloads with the new asset, and again by itself once the scanner has spoken: clean.
    wait_statuses(panel, {video.name: "clean"})
    [asset] = store.assets(waypoint["id"])
    item = panel.find(f"#asset-{asset['id']}")
    assert item.find_element(By.CSS_SELECTOR, ".badge").text == "video"
    assert item.find_element(By.CSS_SELECTOR, "video").get_attribute("src").endswith(f"/assets/{asset['id']}/content")
    assert "36.0 MiB" in item.text
    assert not panel.find("#upload-resume").is_displayed(), "nothing is left to resume"
    assert panel.driver.execute_script("return Object.keys(localStorage).filter((k) => k.startsWith('trail-upload:'))") == []
    panel.assert_accessible("waypoint page with a clean video", media=False)

    # What the server stored: the very bytes that were chosen, in the content-addressed store.
    assert (asset["kind"], asset["mimeType"], asset["size"], asset["originalName"], asset["scanStatus"]) == \
        ("video", "video/mp4", VIDEO_SIZE, video.name, "clean")
    assert asset["sha256"] == expected_sha
    assert asset["storedPath"] == f"assets/{expected_sha}"
    assert sha256_of(server.data / asset["storedPath"]) == expected_sha
    from_api = api.get(f"/manage/assets/{asset['id']}")
    assert (from_api["sha256"], from_api["size"], from_api["scanStatus"]) == (expected_sha, VIDEO_SIZE, "clean")
    assert not store.uploads(waypoint["id"]), "the finished tus upload is gone"
    assert not (server.data / "uploads" / kept["id"]).exists()


def test_several_files_at_once_each_with_its_own_bar(ranger_panel, upload_tour, api, store, server, tmp_path):
    panel = ranger_panel
    waypoint = api.add_waypoint(upload_tour["id"], "Hackleman Grove", 44.39, -122.10,
                                "Old-growth Douglas fir; listen for the pileated woodpecker.")
    files = {
        "grove-notes.md": "# Hackleman Grove\n\nA short loop under **old-growth** Douglas fir.\n".encode(),
        "hackleman-grove.png": png_bytes(),
        "pileated-woodpecker.mp3": b"ID3\x03\x00\x00\x00\x00\x00\x00" + video_bytes(1 * MIB, seed=3)[12:],
        "grove-walk.mp4": video_bytes(3 * MIB, seed=5),
    }
    kinds = {"grove-notes.md": "text", "hackleman-grove.png": "image", "pileated-woodpecker.mp3": "audio", "grove-walk.mp4": "video"}
    paths = []
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
        paths.append(str(tmp_path / name))
    panel.open(f"/tours/{upload_tour['id']}/waypoints/{waypoint['id']}")

    panel.record_uploads()
    panel.network(upload_bytes_per_second=2 * MIB)
    panel.find("#upload-files").send_keys("\n".join(paths))
    rows = panel.upload_rows()
    assert [r["name"] for r in rows] == list(files), "one row per chosen file, at once"
    bars = panel.all("#upload-progress [role=progressbar]")
    assert [b.get_attribute("aria-label") for b in bars] == [f"Upload of {name}" for name in files]
    wait_for("every upload to finish", lambda: len({r["name"] for r in
             (row for entry in panel.upload_history() for row in entry["rows"]) if r["done"]}) == len(files), timeout=30)

    history = panel.upload_history()
    for name in files:
        states = row_history(panel, name)
        assert_grows([s["width"] for s in states], name)
        assert states[-1]["width"] == 100 and states[-1]["status"] == "Uploaded — scanning for malware…", states[-1]
        assert not any(s["failed"] for s in states)
    assert any(sum(0 < r["width"] < 100 for r in entry["rows"]) >= 2 for entry in history), \
        "two bars were moving at the same time"

    wait_statuses(panel, {name: "clean" for name in files})
    panel.network()
    stored = {a["originalName"]: a for a in store.assets(waypoint["id"])}
    assert {name: (a["kind"], a["size"], a["sha256"], a["scanStatus"]) for name, a in stored.items()} == \
        {name: (kinds[name], len(body), sha256_of(body), "clean") for name, body in files.items()}
    for name, asset in stored.items():
        item = panel.find(f"#asset-{asset['id']}")
        assert item.find_element(By.CSS_SELECTOR, ".badge").text == kinds[name]
    image = panel.find(f"#asset-{stored['hackleman-grove.png']['id']} img")
    assert image.get_attribute("alt") == "hackleman-grove.png"
    panel.wait().until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) == 480)
    assert panel.all(f"#asset-{stored['pileated-woodpecker.mp3']['id']} audio")
    notes = panel.find(f"#asset-{stored['grove-notes.md']['id']}")
    assert notes.find_element(By.CSS_SELECTOR, "a").text == "Open the whole text"
    assert notes.find_element(By.CSS_SELECTOR, "pre.asset-text").text.strip() == files["grove-notes.md"].decode().strip(), \
        "the text's beginning is shown as text"
    assert not store.uploads(waypoint["id"])
    panel.assert_accessible("waypoint page with four clean files", media=False)

    # The README's picture of a waypoint with its media.
    panel.wait_map_rendered()
    panel.settle_media()
    path = panel.screenshot("waypoint-assets")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_a_dropped_file_the_scanner_rejects_and_a_cancelled_upload(ranger_panel, upload_tour, api, store, server, tmp_path):
    panel = ranger_panel
    waypoint = api.add_waypoint(upload_tour["id"], "Tombstone Summit", 44.41, -122.15, "Wide views of the Cascades.")
    page = f"/tours/{upload_tour['id']}/waypoints/{waypoint['id']}"
    panel.open(page)

    # Drop the EICAR test file on the drop zone: it uploads, and the scanner quarantines it.
    panel.record_uploads()
    assert panel.drop_files({"trail-notes.txt": EICAR}), "the drop zone is highlighted while a file is dragged over it"
    assert "upload-drop-active" not in panel.find("#upload-drop").get_attribute("class"), "and no longer after the drop"
    wait_for("the dropped file's upload", lambda: any(r["done"] for r in row_history(panel, "trail-notes.txt")), timeout=20)
    wait_statuses(panel, {"trail-notes.txt": "infected"})
    [infected] = store.assets(waypoint["id"])
    assert infected["scanStatus"] == "infected" and infected["storedPath"].startswith("quarantine/")
    assert infected["sha256"] == sha256_of(EICAR)
    item = panel.find(f"#asset-{infected['id']}")
    assert EICAR_SIGNATURE_NAME in item.find_element(By.CSS_SELECTOR, ".asset-detail").text
    assert not item.find_elements(By.CSS_SELECTOR, ".asset-preview"), "an infected file is never shown"
    panel.assert_accessible("waypoint page with an infected file")

    # Start a large upload and cancel it midway: the row says so, the page stays, the server forgets it.
    big = write_video(tmp_path / "summit-panorama.mp4", 16 * MIB)
    panel.record_uploads()
    panel.driver.execute_script("window.__e2eSamePage = true")
    panel.network(upload_bytes_per_second=2 * MIB)
    panel.find("#upload-files").send_keys(str(big))
    panel.wait_upload_row(big.name, lambda r: r["width"] >= 10, "10 %")
    [open_upload] = store.uploads(waypoint["id"])
    assert (server.data / "uploads" / open_upload["id"]).exists()
    panel.find(f"button[aria-label='Cancel upload of {big.name}']").click()
    cancelled = panel.wait_upload_row(big.name, lambda r: r["status"] == "Cancelled.", "Cancelled.")
    assert cancelled["failed"] and not cancelled["cancel"] and 10 <= cancelled["width"] < 100
    wait_for("the server to drop the cancelled upload", lambda: not store.uploads(waypoint["id"]), timeout=10)
    assert not (server.data / "uploads" / open_upload["id"]).exists()
    assert [a["id"] for a in store.assets(waypoint["id"])] == [infected["id"]], "no asset from the cancelled file"
    assert panel.driver.execute_script("return window.__e2eSamePage === true"), "cancelling does not reload the page"
    assert panel.driver.execute_script("return Object.keys(localStorage).filter((k) => k.startsWith('trail-upload:'))") == []
    assert not panel.find("#upload-resume").is_displayed()
    panel.assert_accessible("waypoint page, upload cancelled")
    panel.network()
    drain_console(panel, re.compile(r"/api/v1/manage/uploads/\S+ - Failed to load resource: net::ERR_(ABORTED|FAILED)"))


_RECORD_PATCHES_JS = """
    // The body size of every PATCH the uploader sends, kept in sessionStorage (the page reloads once all are sent).
    sessionStorage.setItem('e2e-patches', '[]');
    const open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.open = function (method, ...rest) { this.e2eMethod = method; return open.call(this, method, ...rest); };
    XMLHttpRequest.prototype.send = function (body) {
        if (this.e2eMethod === 'PATCH') {
            const sizes = JSON.parse(sessionStorage.getItem('e2e-patches'));
            sizes.push(body.size);
            sessionStorage.setItem('e2e-patches', JSON.stringify(sizes));
        }
        return send.call(this, body);
    };
"""


@pytest.mark.parametrize("link, size", [("fast", 120 * MIB), ("slow", 20 * MIB)])
def test_patches_are_sized_to_the_link(ranger_panel, upload_tour, api, store, tmp_path, link, size):
    panel = ranger_panel
    waypoint = api.add_waypoint(upload_tour["id"], f"Clear Lake ({link})", 44.37, -122.05, "Cold, clear, spring-fed.")
    video = write_video(tmp_path / f"clear-lake-{link}.mp4", size)
    panel.open(f"/tours/{upload_tour['id']}/waypoints/{waypoint['id']}")
    panel.driver.execute_script(_RECORD_PATCHES_JS)
    panel.network(upload_bytes_per_second=3 * MIB // 2 if link == "slow" else None)
    panel.find("#upload-files").send_keys(str(video))
    wait_for("the upload to become an asset", lambda: store.assets(waypoint["id"]), timeout=60)
    panel.network()
    sent = panel.driver.execute_script("return JSON.parse(sessionStorage.getItem('e2e-patches'))")
    in_mib = [s / MIB for s in sent]
    assert sum(sent) == size and sent[0] == 8 * MIB, in_mib
    if link == "fast":
        # Loopback: PATCHes end within a second (the first may take longer while the browser warms up), so they
        # grow: never shrinking, doubling at each step, up to 64 MiB; the last one is what is left.
        whole = sent[:-1]
        assert whole == sorted(whole) and all(b in (a, 2 * a) for a, b in zip(whole, whole[1:])), in_mib
        assert max(sent) >= 32 * MIB and max(sent) <= 64 * MIB, in_mib
    else:
        # 1.5 MiB/s: the first PATCH takes over five seconds, so the next one is half as large; 4 MiB take under
        # three, so the size stays. Each size follows the PATCH just before it, not the one before that.
        assert sent == [8 * MIB, 4 * MIB, 4 * MIB, 4 * MIB], in_mib
    [asset] = store.assets(waypoint["id"])
    assert (asset["size"], asset["sha256"]) == (size, sha256_of(video))
