"""schemathesis against a live server: every `/api/v1` operation of `/api/v1/openapi.json`, mobile and management.

A server of its own (not the browser suite's: schemathesis creates and edits tours at random, which must not reach the
screenshots) runs `trail-companion serve --demo --clamav-db <folder>` with an EICAR body signature written by the test,
so uploads are really scanned and packages really built. Before schemathesis starts, the management API (bearer tokens
from `trail-companion token create`) releases the demo tour with a scanned text file (the admin submits, a second user,
a reviewer made with `user create` and `member add`, approves, the admin pushes), releases a second small tour whose
package the visibility and rollback operations may play with, and prepares a scratch tour, an infected asset and an open
tus upload. Their ids go to schemathesis as dictionaries bound to the path parameters, so about half the generated
requests hit real objects (200, 206, 304, 409, …) and the rest random ones (404, 400, …).

Every check schemathesis has (`--checks all`), among them: no 5xx (`not_a_server_error`), the body matches the documented
schema (`response_schema_conformance`), the status code is documented (`status_code_conformance`), the media type is the
documented one (`content_type_conformance`), the documented required headers are there (`response_headers_conformance`),
operations that need the token refuse requests without it (`ignored_auth`), a method the document does not declare for
a path is answered `405` with `Allow` (`unsupported_method`), schema-valid data is accepted and schema-violating data
refused (`positive_data_acceptance`, `negative_data_rejection`, with the domain refusals config_file lists), and a
created object can be read back (`ensure_resource_availability`). Two runs: a fixed seed, then a new one each time.
One refusal no server can give is dropped by `schemathesis_hooks.py`: a multipart file part that schemathesis turned
into a number arrives as that number's text, which is a valid file.

Nothing is excluded: the tus PATCH and DELETE and the destructive DELETEs run too. Their real-id bindings point at
objects made for them (the scratch tour, its waypoints, the open upload), so deleting them cannot take away what the
mobile operations are tested on (the released demo package).

Run alone: `python3 -m pytest -q Tests/e2e/test_api_schemathesis.py` (needs `.build/debug/trail-companion`). Knobs:
`TRAIL_SCHEMATHESIS_EXAMPLES` (default 25 per operation), `TRAIL_SCHEMATHESIS_SEED` (the second run's seed: a number
repeats a run; default a new one each time; every run prints its seeds), `TRAIL_SCHEMATHESIS_CHECKS` (default `all`).
"""
from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from xml.etree import ElementTree

import pytest

from support import ADMIN_EMAIL, Api, ApiError, Server

SITE = "sweet-home"  # the demo site (`--demo`); the first admin manages it
REVIEWER_EMAIL = "rita.reviewer@trail.local"
EICAR_SIGNED_PART = b"EICAR-STANDARD-ANTIVIRUS-TEST-FILE"
EICAR = rb"X5O!P%@AP[4\PZX54(P^)7CC)7}$" + EICAR_SIGNED_PART + rb"!$H+H*"
MAX_EXAMPLES = int(os.environ.get("TRAIL_SCHEMATHESIS_EXAMPLES", "25"))
# Two runs: a fixed seed, then a new one each run (printed; TRAIL_SCHEMATHESIS_SEED=<number> repeats it).
FIXED_SEED = 20261126
_seed = os.environ.get("TRAIL_SCHEMATHESIS_SEED", "random")
SEED = secrets.randbelow(2**31) if _seed == "random" else int(_seed)
HOOKS = Path(__file__).with_name("schemathesis_hooks.py")
CHECKS = os.environ.get("TRAIL_SCHEMATHESIS_CHECKS", "all")


def schemathesis_command() -> list[str]:
    exe = shutil.which("schemathesis") or shutil.which("st")
    return [exe] if exe else [sys.executable, "-m", "schemathesis.cli"]


# --------------------------------------------------------------------------------------------
# Setting the stage through the management API


def upload(server: Server, token: str, tour_id: int, waypoint_id: int, name: str, body: bytes) -> dict:
    """`POST /manage/tours/{id}/waypoints/{wid}/assets`, multipart with one `file` part."""
    boundary = "trail-" + uuid.uuid4().hex
    data = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + body + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(f"{server.base_url}/api/v1/manage/tours/{tour_id}/waypoints/{waypoint_id}/assets",
                                     data=data, method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"upload of {name} failed: {error.code} {error.read().decode(errors='replace')}") from None


def wait_for(what: str, probe, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def scanned(api: Api, asset_id: int, expected: str) -> dict:
    asset = wait_for(f"the scan of asset {asset_id}",
                     lambda: (a := api.get(f"/manage/assets/{asset_id}"))["scanStatus"] != "pending" and a)
    assert asset["scanStatus"] == expected, f"asset {asset_id}: {asset}"
    return asset


def release(api: Api, reviewer: Api, tour_id: int) -> dict:
    """startPublish → build → approve (by the reviewer) → pushPublish; answers the push's body."""
    accepted = api.post(f"/manage/tours/{tour_id}/publish", {})
    request_id = accepted["requestId"]
    built = wait_for(f"the build of request {request_id}",
                     lambda: (r := api.get(f"/manage/publish-requests/{request_id}"))["state"] != "building" and r, timeout=120)
    assert built["state"] == "pending", f"the build did not end pending: {built}"
    approved = reviewer.post(f"/manage/publish-requests/{request_id}/approve", {"comment": "Checked on the trail."})
    assert approved["state"] == "ready", approved
    pushed = api.post(f"/manage/publish-requests/{request_id}/push", {})
    assert isinstance(pushed["version"], int) and pushed["version"] >= 1, pushed
    pushed["requestId"] = request_id
    return pushed


def tus_metadata(tour_id: int, waypoint_id: int) -> str:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()
    return f"tour {b64(str(tour_id))},waypoint {b64(str(waypoint_id))},filename {b64('notes.txt')}"


def tus_create(server: Server, token: str, tour_id: int, waypoint_id: int, length: int) -> str:
    request = urllib.request.Request(f"{server.base_url}/api/v1/manage/uploads", method="POST", data=b"")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Tus-Resumable", "1.0.0")
    request.add_header("Upload-Length", str(length))
    request.add_header("Upload-Metadata", tus_metadata(tour_id, waypoint_id))
    with urllib.request.urlopen(request, timeout=15) as response:
        assert response.status == 201
        return response.headers["Location"].rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    folder = tmp_path_factory.mktemp("schemathesis")
    signatures = folder / "signatures"
    signatures.mkdir()
    (signatures / "trail-test-eicar.ndb").write_text(f"Trail.Test.EICAR:0:*:{EICAR_SIGNED_PART.hex()}\n")
    server = Server(folder / "data", extra_args=("--clamav-db", str(signatures)))
    try:
        server.start()
        server.cli("user", "create", "--email", REVIEWER_EMAIL, "--name", "Rita Reviewer", "--password", "reviewer-" + uuid.uuid4().hex)
        server.cli("member", "add", "--site", SITE, "--email", REVIEWER_EMAIL, "--role", "reviewer")
        admin_token = server.create_token(ADMIN_EMAIL, "schemathesis")
        api = Api(server.base_url, admin_token)
        reviewer = Api(server.base_url, server.create_token(REVIEWER_EMAIL, "schemathesis"))

        # The demo tour, with a scanned text file, released as version 1.
        listed = next(t for t in api.get(f"/manage/tours?site={SITE}")["tours"] if t["name"] == "Santiam Wagon Road")
        demo = api.get(f"/manage/tours/{listed['id']}")  # the list has summaries; the tour has its waypoints
        first = demo["waypoints"][0]
        notes = upload(server, admin_token, demo["id"], first["id"], "house-rock.txt",
                       "The wagon road crossed the South Santiam River here.\n".encode())
        clean = scanned(api, notes["id"], "clean")
        demo_release = release(api, reviewer, demo["id"])

        # A second small tour, released twice, for unpublish / publish / rollback.
        frame = {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}
        loop = api.create_tour(SITE, "Iron Mountain Loop", frame=frame, description="A short loop.")
        api.add_waypoint(loop["id"], "Trailhead", 44.40, -122.15, "Start here.")
        loop_release = release(api, reviewer, loop["id"])
        api.patch(f"/manage/tours/{loop['id']}", {"description": "A short loop, now with a second version."})
        loop_release = release(api, reviewer, loop["id"])
        assert loop_release["version"] == 2

        # A scratch tour that schemathesis may edit (not submit: its infected file keeps it from being ready), a tour and
        # a waypoint it may delete, and two open tus uploads (one to resume, one to cancel).
        scratch = api.create_tour(SITE, "Schemathesis Scratch", frame=frame)
        waypoints = [api.add_waypoint(scratch["id"], f"Point {n}", 44.38 + n / 100, -122.1, "") for n in range(1, 4)]
        infected = upload(server, admin_token, scratch["id"], waypoints[0]["id"], "eicar.txt", EICAR)
        scanned(api, infected["id"], "infected")
        doomed = api.create_tour(SITE, "Schemathesis Doomed", frame=frame)
        resumable = tus_create(server, admin_token, scratch["id"], waypoints[1]["id"], 10_000_000)
        cancellable = tus_create(server, admin_token, scratch["id"], waypoints[1]["id"], 100)

        # The mobile API lists the demo package before the run starts.
        packages = json.loads(urllib.request.urlopen(f"{server.base_url}/api/v1/sites/{SITE}/packages", timeout=15).read())
        assert demo_release["packageId"] in [p["id"] for p in packages], packages
        yield {
            "server": server, "folder": folder, "admin_token": admin_token,
            "site": SITE, "package": demo_release["packageId"], "etag": f'"{demo_release["sha256"]}"',
            "request": demo_release["requestId"], "demo_tour": demo["id"], "loop_package": loop_release["packageId"],
            "scratch_tour": scratch["id"], "waypoints": [w["id"] for w in waypoints[:2]], "doomed_waypoint": waypoints[2]["id"],
            "doomed_tour": doomed["id"], "assets": [clean["id"], infected["id"]],
            "upload": resumable, "doomed_upload": cancellable,
            "upload_metadata": tus_metadata(scratch["id"], waypoints[1]["id"]),
        }
    finally:
        server.stop()


# The RFC 9110 cases of the range tests, offered to the `Range` header of the downloads.
RANGES = ["bytes=0-0", "bytes=-5", "bytes=5-", "bytes=0-1023", "bytes=100-10", "bytes=0-9223372036854775807",
          "bytes=9223372036854775808-", "bytes=0-1,5-9", "bytes=99999999-"]
MOBILE = ["listSitePackages", "getPackage", "downloadPackage", "downloadPackageHead", "downloadPackageVersion",
          "downloadPackageVersionHead", "getPackageHash", "verifyPackage"]


# schemathesis's own defaults (schemathesis/config/_checks.py), widened as config_file explains.
POSITIVE_EXPECTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"] + ["410", "413", "415", "416", "422"]
MISSING_HEADER_EXPECTED = ["400", "401", "403", "406", "415", "422"] + ["412"]
# Refusals of invalid data that come before the data is read, or that are tus's own: an unpublished package is gone
# whatever its query says (410), a JSON body over the server's limit is refused unread (413), a tus PATCH whose bytes
# do not match its Upload-Checksum is refused with 460.
NEGATIVE_EXPECTED = ["400", "401", "403", "404", "405", "406", "409", "415", "422", "428", "429", "5xx"] + ["410", "412", "413", "460"]


def config_file(stage: dict) -> Path:
    """schemathesis.toml: the token for `bearerAuth`, and real values bound to parameters, each operation to the objects
    made for it (a binding with probability 1 always uses the real value; below 1 it mixes with generated ones)."""
    dictionaries = {
        "site": [stage["site"]], "package": [stage["package"]], "version": [1], "etag": [stage["etag"]], "ranges": RANGES,
        "loop_package": [stage["loop_package"]], "scratch_tour": [stage["scratch_tour"]], "demo_tour": [stage["demo_tour"]],
        "doomed_tour": [stage["doomed_tour"]], "waypoint": stage["waypoints"], "doomed_waypoint": [stage["doomed_waypoint"]],
        "asset": stage["assets"], "request": [stage["request"]], "upload": [stage["upload"]],
        "doomed_upload": [stage["doomed_upload"]], "upload_metadata": [stage["upload_metadata"]],
    }

    def bind(**parameters: tuple[str, float]) -> str:
        # `path_id` → "path.id"; `header_If_Range` → "header.If-Range"
        items = []
        for key, (dictionary, probability) in parameters.items():
            location, _, name = key.partition("_")
            name = name.replace("_", "-") if location == "header" else name
            items.append(f'"{location}.{name}" = {{ dictionary = "{dictionary}", probability = {probability} }}')
        return "{ " + ", ".join(items) + " }"

    def operations(ids: list[str], **parameters: tuple[str, float]) -> str:
        return f"[[operations]]\ninclude-operation-id = {json.dumps(ids)}\nparameters = {bind(**parameters)}\n"

    often = 0.7
    text = "\n".join([
        f"hooks = {json.dumps(str(HOOKS))}",
        "",
        "[auth.openapi.bearerAuth]",
        f"bearer = {json.dumps(stage['admin_token'])}",
        "",
        "[generation]",
        f"max-examples = {MAX_EXAMPLES}",
        'database = "none"',
        # A header or query parameter the document does not name is not invalid data: HTTP servers ignore what they do
        # not know (RFC 9110), and so does this one.
        "allow-extra-parameters = false",
        "",
        # Refusals that a JSON schema cannot express are right for schema-valid data: a waypoint name already taken or a
        # caption that is not WebVTT (422), a file of the wrong type (415) or over the site's quota (413), a range past the
        # end (416), an unpublished package (410). Each is declared only by the operations that answer it, so
        # status_code_conformance still refuses it anywhere else. 400 stays out: a schema-valid request called malformed
        # is a fault.
        "[checks.positive_data_acceptance]",
        f"expected-statuses = {json.dumps(POSITIVE_EXPECTED)}",
        "",
        # tus 1.0 answers a request without a supported Tus-Resumable with 412, which the tus operations declare.
        "[checks.missing_required_header]",
        f"expected-statuses = {json.dumps(MISSING_HEADER_EXPECTED)}",
        "",
        "[checks.negative_data_rejection]",
        f"expected-statuses = {json.dumps(NEGATIVE_EXPECTED)}",
        "",
        *[f"[dictionaries.{name}]\nvalues = {json.dumps(values)}" for name, values in dictionaries.items()],
        "",
        # Mobile: the released demo package; the range cases; its ETag for If-Range and If-None-Match.
        operations(MOBILE, path_slug=("site", often), path_id=("package", often), path_version=("version", often),
                   # Often enough that a satisfiable range with a matching (or no) If-Range, a 206, is all but sure to come
                   # up in every run (at 0.5 / 0.3 one CI run in many saw none).
                   header_Range=("ranges", 0.7), header_If_Range=("etag", 0.5), header_If_None_Match=("etag", 0.2)),
        operations(["listTours"], query_site=("site", often)),
        operations(["createTour"], body_site=("site", often)),
        # The scratch tour and two of its waypoints: edit, add, upload.
        operations(["getTour", "updateTour", "createWaypoint", "updateWaypoint", "uploadAsset", "exportTourGeoJSON", "importTour",
                    "uploadTiles", "getTiles", "deleteTiles"],
                   path_id=("scratch_tour", often), path_wid=("waypoint", often)),
        # Deletions always aim at the objects made to be deleted (204 once, then 404), never at the others.
        operations(["deleteWaypoint"], path_id=("scratch_tour", 1.0), path_wid=("doomed_waypoint", 1.0)),
        operations(["deleteTour"], path_id=("doomed_tour", 1.0)),
        operations(["tusDelete"], path_uploadId=("doomed_upload", 1.0)),
        operations(["getAsset"], path_aid=("asset", often)),
        # Submitting the released demo tour: a new request once, then 409 while it is open.
        operations(["startPublish"], path_id=("demo_tour", often)),
        operations(["getPublishRequest", "approvePublishRequest", "denyPublishRequest", "withdrawPublishRequest",
                    "pushPublishRequest"], path_rid=("request", often)),
        operations(["unpublishPackage", "republishPackage", "rollbackPackage"], path_pid=("loop_package", often)),
        operations(["tusCreate"], header_Upload_Metadata=("upload_metadata", 0.5)),
        operations(["tusHead", "tusPatch"], path_uploadId=("upload", often)),
    ])
    path = stage["folder"] / "schemathesis.toml"
    path.write_text(text)
    return path


def observed_statuses(har: Path, document: dict) -> dict[str, set[int]]:
    """`METHOD /path/{template}` → the statuses schemathesis saw, from its HAR report."""
    templates = []
    for path in document["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"
        templates.append((path.count("{"), re.compile(pattern), path))
    templates.sort(key=lambda item: item[0])  # literal paths before templated ones
    seen: dict[str, set[int]] = {}
    for entry in json.loads(har.read_text())["log"]["entries"]:
        path = urllib.parse.urlsplit(entry["request"]["url"]).path.removeprefix("/api/v1")
        template = next((t for _, regex, t in templates if regex.match(path)), path)
        seen.setdefault(f"{entry['request']['method']} {template}", set()).add(entry["response"]["status"])
    return seen


def run_schemathesis(stage: dict, seed: int) -> Path:
    """One schemathesis run with every check; answers its report folder."""
    server: Server = stage["server"]
    config = config_file(stage)
    report = stage["folder"] / f"report-{seed}"
    command = [*schemathesis_command(), "--config-file", str(config), "--no-color", "run",
               f"{server.base_url}/api/v1/openapi.json",
               "--checks", CHECKS,
               "--seed", str(seed),
               "--phases", "examples,coverage,fuzzing,stateful",
               "--workers", "1",  # several workers hit a CPython 3.11 bug (ast.parse in threads: "AST constructor recursion depth mismatch")
               "--request-timeout", "30",
               "--max-failures", "50",
               "--report", "junit,har", "--report-dir", str(report),
               "--suppress-health-check", "too_slow,filter_too_much"]
    print(f"[schemathesis] seed {seed} (repeat with TRAIL_SCHEMATHESIS_SEED={seed})", flush=True)
    started = time.monotonic()
    result = subprocess.run(command, cwd=stage["folder"], capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    print(output[-20000:])
    print(f"[schemathesis] seed {seed}: {elapsed:.0f} s, exit {result.returncode}")
    assert server.process.poll() is None, (f"the server died during the run (exit {server.process.returncode}):\n{server.log_tail()}\n"
                                           f"--- what schemathesis was doing ---\n{output[-6000:]}")
    assert result.returncode == 0, (f"schemathesis (seed {seed}, repeat with TRAIL_SCHEMATHESIS_SEED={seed}) reported failures "
                                    f"(exit {result.returncode}):\n{output[-15000:]}")
    junit = ElementTree.parse(next(report.glob("junit*.xml"))).getroot()
    suite = junit if junit.tag == "testsuite" else junit.find("testsuite")
    assert suite.get("failures") == "0" and suite.get("errors") == "0", ElementTree.tostring(suite, encoding="unicode")[:5000]
    return report


def test_schemathesis_finds_no_server_error_and_no_schema_mismatch(stage):
    server: Server = stage["server"]
    reports = [run_schemathesis(stage, seed) for seed in (FIXED_SEED, SEED)]

    # It really ran: every operation of the document (but the document itself) was tested, none failed.
    document = json.loads(urllib.request.urlopen(f"{server.base_url}/api/v1/openapi.json", timeout=15).read())
    operations = {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
                  if method in ("get", "head", "post", "put", "patch", "delete", "options")}
    assert len(operations) >= 41
    for report in reports:
        junit = ElementTree.parse(next(report.glob("junit*.xml"))).getroot()
        suite = junit if junit.tag == "testsuite" else junit.find("testsuite")
        tested = {case.get("name") for case in suite.iter("testcase")}
        missing = operations - tested - {"GET /openapi.json"}
        assert not missing, f"schemathesis ({report.name}) did not test: {sorted(missing)}"

    # And it reached the real objects, not only 404s: the answers that matter were seen (and checked), in the two runs
    # together (the first run deletes the objects made to be deleted).
    seen: dict[str, set[int]] = {}
    for report in reports:
        for operation, statuses in observed_statuses(next(report.glob("har*.json")), document).items():
            seen.setdefault(operation, set()).update(statuses)
    expected = {
        "GET /sites": 200, "GET /sites/{slug}/packages": 200, "GET /packages/{id}": 200, "GET /packages/{id}/hash": 200,
        "POST /packages/{id}/verify": 200, "GET /packages/{id}/download": 200, "HEAD /packages/{id}/download": 200,
        "GET /packages/{id}/versions/{version}/download": 200, "GET /catalog": 200, "GET /signing-key": 200,
        "GET /manage/tours": 200, "GET /manage/tours/{id}": 200, "GET /manage/assets/{aid}": 200,
        "GET /manage/publish-requests/{rid}": 200, "POST /manage/publish-requests/{rid}/push": 409,
        "POST /manage/publish-requests/{rid}/approve": 403,  # the admin submitted it, so may not review it
        "POST /manage/tours": 201, "PATCH /manage/tours/{id}": 200, "GET /manage/tours/{id}/export.geojson": 200, "POST /manage/tours/{id}/waypoints": 201,
        "DELETE /manage/tours/{id}": 204, "DELETE /manage/tours/{id}/waypoints/{wid}": 204,
        "POST /manage/tours/{id}/publish": 202, "POST /manage/packages/{pid}/unpublish": 200,
        "POST /manage/uploads": 201, "HEAD /manage/uploads/{uploadId}": 200, "DELETE /manage/uploads/{uploadId}": 204,
        "OPTIONS /manage/uploads": 204,
    }
    not_seen = {operation: status for operation, status in expected.items() if status not in seen.get(operation, set())}
    assert not not_seen, (f"never answered as expected: {not_seen}\nseen: "
                          f"{json.dumps({k: sorted(v) for k, v in sorted(seen.items()) if k in operations}, indent=1)}")
    downloads = set().union(*(seen.get(f"{method} /packages/{{id}}{tail}", set()) for method in ("GET", "HEAD")
                              for tail in ("/download", "/versions/{version}/download")))
    assert {200, 206, 304, 416} <= downloads, f"downloads were answered only {sorted(downloads)}"
    print("[schemathesis] statuses seen:", json.dumps({k: sorted(v) for k, v in sorted(seen.items()) if k in operations}, indent=1))
