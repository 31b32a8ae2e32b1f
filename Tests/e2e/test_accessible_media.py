"""Accessible media in the browser: a video with captions and an image with alt text, a submission refused
while an audio file lacks its transcript, the transcript typed in, the submission, and the review page playing the
video with its captions as a <track>. axe runs on every new page state."""
import re

from selenium.webdriver.common.by import By

from support import png_bytes, video_bytes, wait_for
from test_upload import wait_statuses

SANTIAM = {"north": 44.43, "south": 44.36, "east": -122.0, "west": -122.2}
CAPTIONS = b"WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nWater falls over basalt.\n\n00:00:03.000 --> 00:00:06.000\nMist rises.\n"


def asset_id(store, waypoint_id: int, name: str) -> int:
    return next(a["id"] for a in store.assets(waypoint_id) if a["originalName"] == name)


def test_captions_alt_text_and_a_transcript_before_review(admin_panel, e2e_site, api, store, tmp_path):
    panel = admin_panel
    tour = api.create_tour(e2e_site, "Koosah Falls", frame=SANTIAM, description="A short walk to a waterfall.")
    stop = api.add_waypoint(tour["id"], "Koosah Falls", 44.40, -122.05, "The lower falls.")
    files = {"koosah.mp4": video_bytes(2 * 1024 * 1024, seed=41), "koosah.png": png_bytes(),
             "dipper.mp3": b"ID3\x03\x00\x00\x00\x00\x00\x00" + video_bytes(256 * 1024, seed=42)[12:]}
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
    (tmp_path / "koosah.vtt").write_bytes(CAPTIONS)
    (tmp_path / "page.vtt").write_bytes(b"<!DOCTYPE html><html><body>not captions</body></html>\n")

    waypoint_page = f"/tours/{tour['id']}/waypoints/{stop['id']}"
    panel.open(waypoint_page)
    panel.find("#upload-files").send_keys("\n".join(str(tmp_path / name) for name in files))
    wait_statuses(panel, {name: "clean" for name in files})
    video, image, audio = (asset_id(store, stop["id"], name) for name in ("koosah.mp4", "koosah.png", "dipper.mp3"))
    assert panel.text(f"#asset-{video} .asset-captions-missing").startswith("No captions yet")
    assert panel.text(f"#asset-{audio} .asset-transcript-missing").startswith("No transcript yet")
    panel.assert_accessible("waypoint page, media without captions or transcript", media=False)

    # Alt text for the image.
    panel.submit_form(f"#asset-{image} form.asset-describe", altText="Koosah Falls pouring over a basalt ledge into a green pool.")
    assert api.get(f"/manage/assets/{image}")["altText"].startswith("Koosah Falls pouring")

    # An HTML page named .vtt is refused under the field; the real captions are kept and scanned.
    panel.find(f"#captions-{video}").send_keys(str(tmp_path / "page.vtt"))
    panel.submit(panel.find(f"#asset-{video} form.captions-form button[type=submit]"))
    assert "This is an HTML page, not WebVTT captions" in panel.text(f"#captions-error-{video}")
    assert "is-invalid" in panel.find(f"#captions-{video}").get_attribute("class")
    panel.assert_accessible("waypoint page, captions refused", media=False)
    assert api.get(f"/manage/assets/{video}").get("captions") is None
    panel.find(f"#captions-{video}").send_keys(str(tmp_path / "koosah.vtt"))
    panel.submit(panel.find(f"#asset-{video} form.captions-form button[type=submit]"))
    wait_for("the captions' scan", lambda: (api.get(f"/manage/assets/{video}").get("captions") or {}).get("scanStatus") == "clean")
    panel.open(waypoint_page)
    track = panel.find(f"#asset-{video} video track")
    assert track.get_attribute("kind") == "captions" and track.get_attribute("src").endswith("/content")
    panel.assert_accessible("waypoint page with captioned video", media=False)

    # Submitting: refused while the audio has no transcript; the checklist names it.
    panel.open(f"/tours/{tour['id']}")
    checklist = panel.text("#publish-checklist")
    assert "Audio “dipper.mp3” at “Koosah Falls” has no transcript" in checklist, checklist
    assert not panel.all("#publish form[action$='/publish'] button[type=submit]"), "no submit button while the checklist has items"
    panel.assert_accessible("tour page, transcript missing")

    # The transcript typed on the waypoint page.
    panel.open(waypoint_page)
    panel.submit_form(f"#asset-{audio} form.transcript-text-form", text="An American dipper sings over the roar of the falls.")
    wait_for("the transcript's scan", lambda: (api.get(f"/manage/assets/{audio}").get("transcript") or {}).get("scanStatus") == "clean")
    panel.open(waypoint_page)
    assert "An American dipper sings" in panel.text(f"#asset-{audio} .transcript-excerpt")

    # Now it goes to review; the review page plays the video with the package's captions.
    panel.open(f"/tours/{tour['id']}")
    assert "The tour is ready." in panel.text("#publish")
    panel.submit(panel.find("#publish form[action$='/publish'] button[type=submit]"))
    request_id = re.fullmatch(r"/requests/([0-9a-f-]+)", panel.path()).group(1)
    wait_for("the build", lambda: api.publish_request(request_id)["state"] != "building", timeout=120)
    assert api.publish_request(request_id)["state"] == "pending"
    panel.open(f"/requests/{request_id}")
    track = panel.find("video track")
    assert track.get_attribute("kind") == "captions" and re.search(r"/requests/[0-9a-f-]+/assets/\d+/captions$", track.get_attribute("src"))
    captions_link = panel.find(".asset-captions-file a")
    assert captions_link.text == "Captions"
    access = [e.text for e in panel.all(".asset-access")]
    assert "Captions" in access and "Transcript" in access and any(a.startswith("Alt text: Koosah Falls") for a in access), access
    panel.assert_accessible("request page with captions and a transcript", media=False)
