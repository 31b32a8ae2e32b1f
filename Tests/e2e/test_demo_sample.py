"""Day one: `--demo` publishes a sample tour with media the server makes itself, so `/visit` has a tour to open.

The suite's server runs with `--demo` and real signatures: the sample's files are scanned, its package built,
signed, approved and released in the background, like any tour. The player opens it, checks its signature, and the
visitor can play each stop's tone.
"""
from __future__ import annotations

from support import Panel, set_viewport, wait_for

SAMPLE = "Fish Lake Remount Depot"


def test_the_demo_publishes_a_sample_tour_that_plays_in_the_player(server, panel: Panel, store):
    def sample_card():
        panel.open("/visit")
        cards = [card for card in panel.all("[data-package-id]") if SAMPLE in card.text]
        return cards[0].get_attribute("data-package-id") if cards else None

    package = wait_for("the sample tour to be published", sample_card, timeout=180, interval=1)
    assert "No tours are published yet" not in panel.text("main")

    # Its release went through review like any tour's: a request approved by the first admin, then released.
    published = [r for r in store.rows("SELECT publishRequest.state FROM publishRequest JOIN tour ON tour.id = publishRequest.tourId WHERE tour.name = ?", SAMPLE)]
    assert [r["state"] for r in published] == ["published"], published

    set_viewport(panel.driver, 390, 844, mobile=True)
    panel.open(f"/visit/{package}")
    panel.wait(60).until(lambda d: d.execute_script("return document.getElementById('player')?.dataset.offlineState") in ("online-only", "failed"))
    assert panel.find("#player").get_attribute("data-offline-state") == "online-only", panel.text("#player")
    assert panel.find("#player").get_attribute("data-verified") == "true"
    assert [e.get_attribute("data-stop-order") for e in panel.all("[data-stop]")] == ["1", "2", "3"]

    # Each stop has its tone, as audio the phone can play: open the first stop and play it for a moment.
    panel.find("[data-stop-order='1'] .visit-stop-open").click()
    audio = panel.wait(30).until(lambda d: d.find_element("css selector", "[data-stop-order='1'] audio[data-stop-audio]"))
    assert audio.size["height"] > 0, "the audio control is visible"
    panel.driver.execute_script("arguments[0].muted = true; return arguments[0].play()", audio)
    wait_for("the tone to play", lambda: panel.driver.execute_script("return arguments[0].currentTime > 0.2", audio), timeout=30)
    assert panel.driver.execute_script("return arguments[0].duration", audio) > 3.5
    # The picture of the first stop, with its alt text.
    image = panel.find("[data-stop-order='1'] img[alt]")
    assert "lake" in image.get_attribute("alt")
    assert panel.driver.execute_script("return arguments[0].naturalWidth", image) == 640
