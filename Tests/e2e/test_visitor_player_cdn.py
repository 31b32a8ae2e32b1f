"""The visitor web player behind object storage: with `--storage` and `--public-download-url`, the player's file
fetches are redirected to the bucket (here a real SeaweedFS, which answers cross-origin reads as a CDN in front of a
public bucket must) and the player saves, checks and plays the tour from there, the server sending none of the files.

The tour, its release and the browser are the ones of test_visitor_player.py; only the server differs.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from support import Server, wait_for, write_signatures
from test_visitor_player import (  # noqa: F401  (fixtures, found by name)
    file_bytes_sent, listed, manifest, published, rangers, resource_requests, start_visit_server, visitor, wait_state,
)

REPO = Path(__file__).resolve().parents[2]
BUCKET, PREFIX = "park-tours", "prod"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    folder = tmp_path_factory.mktemp("visit-bucket")
    process = subprocess.Popen([sys.executable, str(REPO / "Tests/TestSupport/Scripts/object_store.py"), "seaweedfs", str(folder), BUCKET],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    try:
        line = process.stdout.readline()
        assert line, "the object store did not start (see its log in the test's folder)"
        yield json.loads(line)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def visit_server(tmp_path_factory, bucket):
    data = tmp_path_factory.mktemp("visit-cdn-data")
    public_url = f"{bucket['endpoint']}/{BUCKET}/{PREFIX}"
    server = Server(data, demo=False, extra_args=(
        "--clamav-db", str(write_signatures(tmp_path_factory.mktemp("visit-cdn-clamav"))),
        "--storage", f"s3://{BUCKET}/{PREFIX}", "--s3-endpoint", bucket["endpoint"], "--public-download-url", public_url))
    server.public_download_url = public_url
    # The keys reach the server through its environment only, as the operators' guide says.
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update({"AWS_ACCESS_KEY_ID": bucket["accessKey"], "AWS_SECRET_ACCESS_KEY": bucket["secretKey"]})
    try:
        yield start_visit_server(server)
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_the_player_saves_a_tour_from_the_bucket(visit_server, published, visitor):
    panel, driver, package = visitor, visitor.driver, published["package"]
    v1 = manifest(visit_server, package, 1)
    wanted = set(listed(v1).values())

    def in_bucket(sha256: str) -> bool:
        """The files route answers 302 to the bucket once the sync confirmed the object there."""
        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(f"{visit_server.base_url}/api/v1/files/{sha256}", timeout=10)
        except urllib.error.HTTPError as answer:
            return answer.code == 302 and answer.headers["Location"] == f"{visit_server.public_download_url}/files/{sha256}"
        return False
    wait_for("the bucket to hold every file of the release", lambda: all(in_bucket(sha) for sha in wanted), timeout=120)

    before = file_bytes_sent(visit_server)
    panel.open(f"/visit/{package}")
    assert wait_state(panel, "online-only", "failed") == "online-only", panel.text("#player")
    driver.execute_script("performance.setResourceTimingBufferSize(100000); performance.clearResourceTimings()")
    panel.find("[data-action='save-offline']").click()
    assert wait_state(panel, "ready", "failed", timeout=120) == "ready", (panel.text("#offline-error"), driver.get_log("browser"))
    assert "version 1" in panel.text("#offline-status")
    # Every file came from the bucket: the server sent none of their bytes.
    assert file_bytes_sent(visit_server) == before, "the server sent file bytes although the bucket holds them"
    assert {r.rsplit("/", 1)[1] for r in resource_requests(panel, "/api/v1/files/")} == wanted, "every listed file was fetched"
    # And the saved copy plays offline as it does without a bucket.
    wait_for("the service worker to control the page", lambda: driver.execute_script("return !!navigator.serviceWorker.controller"), timeout=30)
    visit_server.stop()
    try:
        driver.refresh()
        assert wait_state(panel, "ready", "failed") == "ready", panel.text("#player")
        panel.find("[data-stop-order='1'] button").click()
        panel.wait(15).until(lambda d: d.execute_script(
            "const a = document.querySelector('[data-stop-order=\"1\"] audio[data-stop-audio]'); return !!(a && a.src)"))
    finally:
        visit_server.start()
