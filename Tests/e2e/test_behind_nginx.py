"""The server behind the shipped nginx site (deploy/nginx.conf), over TLS, as a district would run it.

Debian's nginx runs with a config made from deploy/nginx.conf, changed only where a test machine must differ
(`support.nginx_site`: loopback ports, a throw-away self-signed certificate from `openssl req -x509`, the test
server's port), in front of its own `trail-companion serve` started with `--trusted-proxies 127.0.0.1/32` and
`--public-url https://127.0.0.1:<nginx port>`, on a data folder of its own. Everything below goes through nginx,
over HTTPS checked against that one certificate (Chromium accepts its key and no other):

- plain HTTP is redirected to HTTPS;
- the browser's sign-in (the first admin's one-time password, then a new one) works, and the cookies are `Secure`;
- a 200 MiB multipart upload, streamed, arrives whole (size and SHA-256 from the management API);
- a tus upload cut midway arrives whole after a resume, and the bytes sent before the cut were kept
  (`proxy_request_buffering off`: nginx streamed them to the server instead of holding them);
- a released package downloads in ranges, resumed with If-Range, to its listed SHA-256, the bytes sent by nginx
  (`--accel-redirect`) with the server's validator and security headers;
- the public read routes are answered from nginx's cache and revalidated: a change shows within a second;
- the sign-in throttle and the audit log see the visitor's own address. The visitors connect from 127.0.0.2 and
  127.0.0.3 (the whole 127/8 is loopback on Linux), which the server does not trust, while nginx reaches the server
  from 127.0.0.1, which it does; a forged X-Forwarded-For the visitor sends is not believed.

nginx, the server and the temp folder (200 MiB of it) are gone at the end.
"""
from __future__ import annotations

import hashlib
import http.client
import io
import json
import re
import secrets
import shutil
import socket
import ssl
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support import (ADMIN_EMAIL, CAPTIONS, DEPLOY, Nginx, Panel, Server, Store, chrome, console_errors, free_port, self_signed_certificate,
                     spki_sha256, video_bytes, wait_for, write_nginx_config, write_signatures, write_video)

MIB = 1024 * 1024
SITE = "sweet-home"  # the demo site
FRAME = {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}
REVIEWER = "rita.reviewer@trail.local"
VISITOR = "127.0.0.2"  # a visitor the server does not trust; nginx itself connects from 127.0.0.1
OTHER_VISITOR = "127.0.0.3"
FORGED = "203.0.113.7"  # what a visitor claims in its own X-Forwarded-For


class Front:
    """The deployment under test: nginx (HTTPS and HTTP ports) in front of `server`. `base_url` makes it usable as
    the `server` of a `Panel`."""

    def __init__(self, server: Server, nginx: Nginx, https_port: int, http_port: int, cert: Path):
        self.server, self.nginx = server, nginx
        self.https_port, self.http_port = https_port, http_port
        self.base_url = f"https://127.0.0.1:{https_port}"
        self.cert = cert
        self.tls = ssl.create_default_context(cafile=str(cert))  # this certificate only, host name checked
        self.store = Store(server.data / "trail.sqlite")
        self.token = ""  # the admin's API token, set by the fixture

    def connection(self, source: str = "127.0.0.1", timeout: float = 60) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.https_port, context=self.tls, timeout=timeout,
                                           source_address=(source, 0))

    def request(self, method: str, path: str, body=None, headers: dict | None = None, source: str = "127.0.0.1",
                timeout: float = 60) -> tuple[int, http.client.HTTPMessage, bytes]:
        connection = self.connection(source, timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()

    def api(self, method: str, path: str, body: dict | None = None, token: str | None = None):
        """The management API through nginx with a bearer token (the admin's by default); answers the JSON."""
        headers = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        status, _, answer = self.request(method, "/api/v1" + path, data, headers)
        assert status < 400, f"{method} {path}: {status} {answer[:400]!r}"
        return json.loads(answer) if answer else None


def log_tails(front: Front) -> str:
    return f"server:\n{front.server.log_tail()}\nnginx:\n{front.nginx.log_tail()}"


@pytest.fixture(scope="module")
def front(tmp_path_factory):
    folder = tmp_path_factory.mktemp("behind-nginx")
    cert, key = self_signed_certificate(folder / "tls")
    https_port, http_port = free_port(), free_port()
    server = Server(folder / "data", extra_args=(
        "--clamav-db", str(write_signatures(folder / "signatures")),
        "--trusted-proxies", "127.0.0.1/32", "--public-url", f"https://127.0.0.1:{https_port}",
        "--accel-redirect", "/_trail_files/"))
    nginx = None
    try:
        server.start()
        assert server.one_time_password, f"no one-time password in the server's first-start output:\n{server.log_tail()}"
        nginx = Nginx(write_nginx_config(folder / "nginx", http_port, https_port, server.port, cert, key, data=server.data))
        nginx.start(https_port)
        deployment = Front(server, nginx, https_port, http_port, cert)
        deployment.token = server.create_token(ADMIN_EMAIL, "behind-nginx")
        yield deployment
    finally:
        if nginx:
            nginx.stop()
        server.stop()
        assert nginx is None or nginx.process.poll() is not None, "nginx is still running"
        assert server.process is None or server.process.poll() is not None, "the server is still running"
        shutil.rmtree(folder, ignore_errors=True)


def new_tour(front: Front, name: str) -> tuple[dict, dict]:
    """A tour with a frame and one waypoint on the demo site, made through nginx; answers (tour, waypoint)."""
    tour = front.api("POST", "/manage/tours", {"site": SITE, "name": name, "description": "Made through nginx."})
    front.api("PATCH", f"/manage/tours/{tour['id']}", {"frame": FRAME})
    waypoint = front.api("POST", f"/manage/tours/{tour['id']}/waypoints",
                         {"name": "Fish Lake", "latitude": 44.40, "longitude": -122.0, "description": ""})
    return tour, waypoint


def scanned(front: Front, asset_id: int, timeout: float = 120) -> dict:
    return wait_for(f"the scan of asset {asset_id}",
                    lambda: (a := front.api("GET", f"/manage/assets/{asset_id}"))["scanStatus"] != "pending" and a, timeout)


# --------------------------------------------------------------------------------------------


def test_plain_http_is_redirected_to_https(front):
    connection = http.client.HTTPConnection("127.0.0.1", front.http_port, timeout=10)
    try:
        connection.request("GET", "/tours/1?tab=media")
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    # The shipped site redirects to the standard port of the same host (the test's HTTPS port is another).
    assert response.status == 301, response.status
    assert response.headers["Location"] == "https://127.0.0.1/tours/1?tab=media"


def test_the_upload_limit_matches_the_servers(front):
    """nginx's body limit on uploads is the server's --max-upload-size (its default here, as tus announces it
    through nginx) plus room for a multipart body's part headers and boundaries; elsewhere it is small."""
    status, headers, _ = front.request("OPTIONS", "/api/v1/manage/uploads")
    assert status == 204, status
    server_limit = int(headers["Tus-Max-Size"])
    units = {"": 1, "k": 1024, "m": MIB, "g": 1024 * MIB}
    limits = sorted(int(n) * units[u.lower()] for n, u in
                    re.findall(r"^\s*client_max_body_size (\d+)([kKmMgG]?);", (DEPLOY / "nginx.conf").read_text(), re.MULTILINE))
    assert len(limits) == 2, limits
    assert limits[0] <= MIB, f"the limit outside uploads is {limits[0]} bytes"
    assert server_limit + 64 * 1024 <= limits[1] <= server_limit + 16 * MIB, (limits[1], server_limit)


def test_browser_signs_in_through_nginx_with_secure_cookies(front):
    driver = chrome(arguments=(f"--ignore-certificate-errors-spki-list={spki_sha256(front.cert)}",))
    try:
        panel = Panel(driver, front)
        panel.open("/login")
        assert driver.current_url.startswith(front.base_url + "/login"), driver.current_url
        panel.sign_in(ADMIN_EMAIL, front.server.one_time_password)
        assert panel.path() == "/account/password", f"first sign-in led to {panel.path()}"
        password = "nginx-" + secrets.token_urlsafe(12)
        panel.change_password(front.server.one_time_password, password)
        assert panel.path() == "/sites", panel.path()
        assert "password has been changed" in panel.notice()

        cookies = {c["name"]: c for c in driver.get_cookies()}
        assert "tc_session" in cookies, cookies
        for name in ("tc_session", "tc_csrf"):
            if name in cookies:
                assert cookies[name]["secure"] is True and cookies[name]["httpOnly"] is True, cookies[name]
        errors = console_errors(driver)
        assert not errors, "errors in the browser console:\n" + "\n".join(errors)
    finally:
        driver.quit()

    # What the browser saw, once more by hand: every cookie Secure, HSTS from the server, the page served over TLS.
    status, headers, _ = front.request("GET", "/login")
    assert status == 200
    cookies = headers.get_all("Set-Cookie") or []
    assert cookies and all("; secure" in c.lower() for c in cookies), cookies
    assert headers["Strict-Transport-Security"].startswith("max-age="), dict(headers)
    started = front.store.rows("SELECT ipAddress FROM auditEvent WHERE action = 'session.start'")
    assert started and started[-1]["ipAddress"] == "127.0.0.1", started  # the browser runs on loopback


def test_a_200_mib_multipart_upload_arrives_whole(front, tmp_path):
    tour, waypoint = new_tour(front, "Big Upload")
    video = write_video(tmp_path / "summit.mp4", 200 * MIB)
    digest = hashlib.sha256()
    with open(video, "rb") as file:
        for piece in iter(lambda: file.read(MIB), b""):
            digest.update(piece)
    boundary = "nginx-" + uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"summit.mp4\"\r\n"
            "Content-Type: video/mp4\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():  # streamed from disk in 1 MiB pieces, with a Content-Length, as a browser sends a form
        yield head
        with open(video, "rb") as file:
            yield from iter(lambda: file.read(MIB), b"")
        yield tail

    started = time.monotonic()
    try:
        status, _, answer = front.request(
            "POST", f"/api/v1/manage/tours/{tour['id']}/waypoints/{waypoint['id']}/assets", body(),
            {"Authorization": f"Bearer {front.token}", "Accept": "application/json",
             "Content-Type": f"multipart/form-data; boundary={boundary}",
             "Content-Length": str(len(head) + video.stat().st_size + len(tail))}, timeout=300)
    finally:
        elapsed = time.monotonic() - started
        video.unlink()
    assert status == 201, f"{status} {answer[:400]!r}\n{log_tails(front)}"
    asset = json.loads(answer)
    print(f"\n[nginx] 200 MiB multipart upload through nginx: {elapsed:.1f} s")
    stored = front.api("GET", f"/manage/assets/{asset['id']}")
    assert (stored["size"], stored["sha256"]) == (200 * MIB, digest.hexdigest()), stored
    assert stored["mimeType"] == "video/mp4" and stored["originalName"] == "summit.mp4", stored


def test_a_tus_upload_cut_midway_is_resumed_whole(front, monkeypatch):
    from tusclient import client as tus_client
    from tusclient.uploader import Uploader

    # tuspy talks through requests, which then checks nginx's certificate against this file only.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(front.cert))
    tour, waypoint = new_tour(front, "Resumed Upload")
    content = video_bytes(24 * MIB)
    auth = {"Authorization": f"Bearer {front.token}"}
    client = tus_client.TusClient(f"{front.base_url}/api/v1/manage/uploads", headers=auth)
    metadata = {"tour": str(tour["id"]), "waypoint": str(waypoint["id"]), "filename": "waterfall.mp4"}
    first = client.uploader(file_stream=io.BytesIO(content), chunk_size=4 * MIB, metadata=metadata, retries=0)
    first.upload_chunk()
    first.upload_chunk()
    before = first.offset
    assert before == 8 * MIB, before
    path = urllib.parse.urlsplit(first.url).path
    upload_id = path.rsplit("/", 1)[-1]
    assert first.url == f"{front.base_url}/api/v1/manage/uploads/{upload_id}", first.url
    on_disk = front.server.data / "uploads" / upload_id

    # The cut: a PATCH promising the other 16 MiB sends 6, and the connection drops once the server has written at
    # least 4 of them. With nginx holding request bodies (its default), the server would see none of them.
    rest = content[before:]
    raw = socket.create_connection(("127.0.0.1", front.https_port), timeout=30)
    sock = front.tls.wrap_socket(raw, server_hostname="127.0.0.1")
    sock.sendall((f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1:{front.https_port}\r\nAuthorization: Bearer {front.token}\r\n"
                  "Tus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n"
                  f"Upload-Offset: {before}\r\nContent-Length: {len(rest)}\r\n\r\n").encode())
    sock.sendall(rest[:6 * MIB])
    wait_for("the server to write the first 4 MiB of the cut PATCH",
             lambda: on_disk.exists() and on_disk.stat().st_size >= before + 4 * MIB, timeout=30, interval=0.02)
    sock.shutdown(socket.SHUT_RDWR)  # dropped, not closed politely: no TLS close_notify, no rest of the body
    sock.close()

    def offset():
        status, headers, _ = front.request("HEAD", path, headers={**auth, "Tus-Resumable": "1.0.0"})
        assert status == 200, status
        return int(headers["Upload-Offset"])

    kept = wait_for("the server to record the bytes of the cut PATCH", lambda: (o := offset()) > before and o, timeout=30)
    assert before + 4 * MIB <= kept <= before + 6 * MIB, f"kept {kept} of the cut PATCH (sent up to {before + 6 * MIB})"

    resumed = Uploader(file_stream=io.BytesIO(content), url=first.url, client=client, chunk_size=4 * MIB,
                       upload_checksum=True, retries=0)
    assert resumed.offset == kept, (resumed.offset, kept)
    resumed.upload()
    assert resumed.offset == len(content)
    answer = {k.lower(): v for k, v in resumed.request.response_headers.items()}
    asset = front.api("GET", f"/manage/assets/{int(answer['asset-id'])}")
    assert (asset["size"], asset["sha256"]) == (len(content), hashlib.sha256(content).hexdigest()), asset
    assert asset["originalName"] == "waterfall.mp4", asset


@pytest.fixture(scope="module")
def released(front) -> dict:
    """A tour with a 3 MiB video, scanned, built, approved by a reviewer and released, all through nginx;
    answers the package as the mobile API describes it."""
    front.server.cli("user", "create", "--email", REVIEWER, "--name", "Rita Reviewer", "--password", "reviewer-" + uuid.uuid4().hex)
    front.server.cli("member", "add", "--site", SITE, "--email", REVIEWER, "--role", "reviewer")
    reviewer = front.server.create_token(REVIEWER, "behind-nginx")
    tour, waypoint = new_tour(front, "Ranged Download")
    content = video_bytes(3 * MIB, seed=17)
    boundary = "nginx-" + uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"falls.mp4\"\r\n"
            "Content-Type: video/mp4\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    status, _, answer = front.request("POST", f"/api/v1/manage/tours/{tour['id']}/waypoints/{waypoint['id']}/assets", body,
                                      {"Authorization": f"Bearer {front.token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 201, answer
    video_id = json.loads(answer)["id"]
    assert scanned(front, video_id)["scanStatus"] == "clean"
    # Captions, which the site requires on every video before a submission (the default), through nginx too.
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"falls.vtt\"\r\n"
            "Content-Type: text/vtt\r\n\r\n").encode() + CAPTIONS + f"\r\n--{boundary}--\r\n".encode()
    status, _, answer = front.request("POST", f"/api/v1/manage/assets/{video_id}/captions", body,
                                      {"Authorization": f"Bearer {front.token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 201, answer
    assert scanned(front, json.loads(answer)["id"])["scanStatus"] == "clean"
    request_id = front.api("POST", f"/manage/tours/{tour['id']}/publish", {})["requestId"]
    built = wait_for(f"the build of request {request_id}",
                     lambda: (r := front.api("GET", f"/manage/publish-requests/{request_id}"))["state"] != "building" and r, timeout=180)
    assert built["state"] == "pending", built
    assert front.api("POST", f"/manage/publish-requests/{request_id}/approve", {"comment": "Checked."}, token=reviewer)["state"] == "ready"
    pushed = front.api("POST", f"/manage/publish-requests/{request_id}/push", {})
    status, _, detail = front.request("GET", f"/api/v1/packages/{pushed['packageId']}")
    assert status == 200, detail
    return json.loads(detail)


def test_a_released_package_downloads_in_ranges(front, released):
    size, sha256, etag = released["size"], released["sha256"], None
    assert size > 3 * MIB, released
    # The server names itself by its public URL: the download link points at nginx, over HTTPS.
    url = urllib.parse.urlsplit(released["downloadURL"])
    assert (url.scheme, url.netloc) == ("https", f"127.0.0.1:{front.https_port}"), released["downloadURL"]

    status, headers, _ = front.request("HEAD", url.path)
    assert status == 200 and headers["Accept-Ranges"] == "bytes" and int(headers["Content-Length"]) == size, dict(headers)
    etag = headers["ETag"]
    assert etag == f'"{sha256}"', dict(headers)

    # The whole file, sent by nginx from the data folder: its static module adds Last-Modified, which the server
    # never sends; the server's own headers came over.
    status, headers, whole = front.request("GET", url.path)
    assert status == 200 and hashlib.sha256(whole).hexdigest() == sha256, (status, dict(headers))
    assert headers["Last-Modified"] and "X-Accel-Redirect" not in headers, dict(headers)
    assert headers["ETag"] == etag and headers["X-Content-Type-Options"] == "nosniff" and headers["Package-Version"], dict(headers)
    assert headers["Content-Disposition"].startswith("attachment;") and headers["Content-Type"] == "application/zip", dict(headers)
    assert headers["Strict-Transport-Security"], dict(headers)
    # The internal location itself is nobody's to ask for.
    status, _, _ = front.request("GET", f"/_trail_files/packages/{released['id']}/1.zip")
    assert status == 404

    # A phone loses the signal after the first MiB, then resumes from there; and fetches the last 100 bytes alone.
    status, headers, first = front.request("GET", url.path, headers={"Range": f"bytes=0-{MIB - 1}"})
    assert status == 206 and headers["Content-Range"] == f"bytes 0-{MIB - 1}/{size}" and len(first) == MIB, (status, dict(headers))
    status, headers, rest = front.request("GET", url.path, headers={"Range": f"bytes={MIB}-", "If-Range": etag})
    assert status == 206 and headers["Content-Range"] == f"bytes {MIB}-{size - 1}/{size}", (status, dict(headers))
    assert hashlib.sha256(first + rest).hexdigest() == sha256, "the two ranges do not make the released package"
    status, headers, tail = front.request("GET", f"/api/v1/packages/{released['id']}/download", headers={"Range": "bytes=-100"})
    assert status == 206 and tail == (first + rest)[-100:], (status, dict(headers))
    # A stale validator gets the whole current file instead of a piece of another version.
    status, headers, whole = front.request("GET", url.path, headers={"Range": f"bytes={MIB}-", "If-Range": '"not-this-version"'})
    assert status == 200 and hashlib.sha256(whole).hexdigest() == sha256, (status, dict(headers))


def test_public_reads_come_from_nginx_cache_and_a_change_shows_within_seconds(front):
    path = "/api/v1/sites"
    front.request("GET", path)
    status, headers, body = front.request("GET", path)
    # Kept for a second, then revalidated with the server's ETag (a 304 from the server refreshes the copy).
    assert status == 200 and headers["X-Cache-Status"] in ("HIT", "REVALIDATED"), dict(headers)
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["ETag"], dict(headers)
    # Credentials go to the server, never into the cache.
    status, headers, _ = front.request("GET", path, headers={"Authorization": f"Bearer {front.token}"})
    assert status == 200 and headers["X-Cache-Status"] == "BYPASS", dict(headers)
    # A change made by another process (the CLI) reaches the cached answer within about a second.
    slug = "cache-" + uuid.uuid4().hex[:8]
    front.server.cli("site", "create", "--slug", slug, "--name", "Cache Check")
    wait_for("the new site in the cached list", lambda: slug.encode() in front.request("GET", path)[2], timeout=5)


def test_the_visitors_list_is_cached_like_the_public_reads(front):
    path = "/visit"
    front.request("GET", path)
    status, headers, body = front.request("GET", path)
    assert status == 200 and headers["X-Cache-Status"] in ("HIT", "REVALIDATED"), str(headers.items())
    etag = headers["ETag"]
    assert etag.startswith('"') and headers["Cache-Control"] == "no-cache", dict(headers)
    # The browser's own copy is revalidated too: its ETag gets a 304 without the page.
    status, headers, body = front.request("GET", path, headers={"If-None-Match": etag})
    assert status == 304 and body == b"", (status, dict(headers))
    # A signed-in ranger (a cookie) is answered by the server, and the answer is not kept.
    status, headers, _ = front.request("GET", path, headers={"Cookie": "tc_session=whatever"})
    assert status == 200 and headers["X-Cache-Status"] == "BYPASS", dict(headers)


def sign_in(front: Front, email: str, password: str, source: str, forwarded_for: str | None = None) -> int:
    """One sign-in by hand from `source` (a loopback address of the visitor's), with the anonymous form's
    double-submit CSRF token; answers the status (303 signed in, 401 wrong, 429 throttled)."""
    status, headers, _ = front.request("GET", "/login", source=source)
    assert status == 200
    cookie = next(c for c in headers.get_all("Set-Cookie") if c.startswith("tc_csrf="))
    token = cookie.split(";", 1)[0].split("=", 1)[1]
    extra = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    form = urllib.parse.urlencode({"email": email, "password": password, "_csrf": token}).encode()
    status, _, _ = front.request("POST", "/login", form, {"Content-Type": "application/x-www-form-urlencoded",
                                                          "Cookie": f"tc_csrf={token}", **extra}, source=source)
    return status


def test_the_throttle_and_the_audit_log_see_the_visitors_address(front):
    warden = "wade.warden@trail.local"
    password = "warden-" + secrets.token_urlsafe(12)
    front.server.cli("user", "create", "--email", warden, "--name", "Wade Warden", "--password", password)

    # A wrong password from the visitor, who also claims to be someone else: the audit log names the visitor.
    assert sign_in(front, warden, "not the password", VISITOR, forwarded_for=FORGED) == 401
    failed = front.store.rows("SELECT ipAddress FROM auditEvent WHERE action = 'session.failed' AND detail = ?", warden)
    assert [e["ipAddress"] for e in failed] == [VISITOR], failed

    # 19 more failures from the same visitor under other emails (20 per address in 15 minutes are allowed), each
    # with another forged address: all counted against the visitor, none against the proxy or the forged ones.
    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = list(pool.map(lambda n: sign_in(front, f"guess{n}@trail.local", "wrong password", VISITOR,
                                                   forwarded_for=f"203.0.113.{n}, 198.51.100.{n}"), range(1, 20)))
    assert statuses == [401] * 19, statuses
    # The 21st attempt from that address is refused before the password is even checked, right or not.
    assert sign_in(front, warden, password, VISITOR) == 429
    failures = front.store.rows("SELECT ipAddress, COUNT(*) AS n FROM loginFailure GROUP BY ipAddress")
    assert failures == [{"ipAddress": VISITOR, "n": 20}], failures
    # Another visitor behind the same proxy is not locked out with them.
    assert sign_in(front, warden, password, OTHER_VISITOR) == 303

    failed = front.store.rows("SELECT DISTINCT ipAddress FROM auditEvent WHERE action = 'session.failed'")
    assert failed == [{"ipAddress": VISITOR}], failed
    started = front.store.rows("SELECT auditEvent.ipAddress FROM auditEvent JOIN user ON user.id = auditEvent.userId"
                               " WHERE action = 'session.start' AND user.email = ?", warden)
    assert started == [{"ipAddress": OTHER_VISITOR}], started
