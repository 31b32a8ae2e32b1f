"""Helpers for the browser suite: the real server process, its API and database, and a page driver.

Everything here talks to the real `trail-companion` binary on a loopback port with a fresh data folder,
through Debian's Chromium and chromedriver. Nothing is downloaded: Selenium Manager is never asked.
"""
from __future__ import annotations

import atexit
import json
import math
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait
from selenium.common.exceptions import ElementNotInteractableException

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("TRAIL_E2E_BINARY", REPO / ".build" / "debug" / "trail-companion"))
CHROMIUM = os.environ.get("TRAIL_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TRAIL_E2E_CHROMEDRIVER", "/usr/bin/chromedriver")
# The test run never rewrites tracked files: pictures go under .build/ unless scripts/screenshots.sh asks for docs/.
SCREENSHOTS = Path(os.environ.get("TRAIL_SCREENSHOTS", str(REPO / ".build" / "screenshots")))

ADMIN_EMAIL = "admin@trail.local"
WAIT = 15  # seconds: the longest any single page step may take
# What `Api.upload` attaches to every video: sites require captions before a submission (the default).
CAPTIONS = b"WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nWind over the lake.\n"


# --------------------------------------------------------------------------------------------
# The server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when pytest goes away, however it ends."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


_COPIES: dict[tuple[int, int], Path] = {}  # (size, mtime) of .build's binary -> its private copy


def private_binary(timeout: float = 300) -> Path:
    """The run's private copy of the built binary, made once the binary is whole and then shared by every server of
    the run (the debug binary is about 200 MB, and the suite starts some twenty servers). The linker
    rewrites it in place, so a build running beside the suite (another checkout sharing .build/) could otherwise hand
    us a half-written file; a binary rebuilt meanwhile gets a copy of its own. The copies go when the run ends."""
    deadline = time.monotonic() + timeout
    while True:
        before = BINARY.stat()
        key = (before.st_size, before.st_mtime_ns)
        if key in _COPIES and _COPIES[key].is_file():
            return _COPIES[key]
        if time.time() - before.st_mtime > 3:
            folder = Path(tempfile.mkdtemp(prefix="trail-e2e-binary-"))
            atexit.register(shutil.rmtree, folder, True)
            copy = folder / "trail-companion"
            shutil.copy2(BINARY, copy)
            after = BINARY.stat()
            if (after.st_size, after.st_mtime_ns) == key == (copy.stat().st_size, copy.stat().st_mtime_ns):
                _COPIES[key] = copy
                return copy
            shutil.rmtree(folder, ignore_errors=True)
        if time.monotonic() > deadline:
            raise RuntimeError(f"{BINARY} kept changing for {timeout} s (a build is running?)")
        time.sleep(1)


class Server:
    """`trail-companion serve` on a free loopback port, with its own data folder."""

    def __init__(self, data: Path, port: int | None = None, demo: bool = True, extra_args: tuple[str, ...] = (),
                 optimize_media: bool = False):
        self.data = Path(data)
        # Off by default: most scenarios upload made-up bytes that no converter could read, and their copies would
        # block publishing. The media scenario turns it on with real files.
        self.optimize_media = optimize_media
        self.extra_args = tuple(extra_args)  # e.g. ("--clamav-db", folder) for the upload scenarios
        self.port = port or free_port()
        self.demo = demo
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.data.parent / f"{self.data.name}-server.log"
        self.process: subprocess.Popen | None = None
        self.one_time_password: str | None = None
        # The run's private copy of the binary once started (`private_binary`): a rebuild of .build/ while the suite
        # runs cannot pull it away.
        self.binary = BINARY

    def start(self, timeout: float = 60) -> None:
        if not BINARY.is_file():
            raise RuntimeError(f"{BINARY} is missing: run `swift build --product trail-companion` first")
        self._copy_binary()
        args = [str(self.binary), "serve", "--root", str(REPO), "--data", str(self.data),
                "--hostname", "127.0.0.1", "--port", str(self.port)]
        if self.demo:
            args.append("--demo")
        if not self.optimize_media:
            args.append("--no-optimize-media")
        # The suite signs in as the admin with a password alone; test_two_step.py starts its own server with the
        # default (admins must enrol). A later --require-two-step in extra_args wins.
        if "--require-two-step" not in self.extra_args:
            args.extend(["--require-two-step", "none"])
        args.extend(self.extra_args)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRAIL_")}
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(args, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError(f"the server did not answer /healthz within {timeout} s:\n{self.log_tail()}")
        # The first start writes the admin's one-time password to a 0600 file in the data folder (not the log), on a
        # line "password: XXXX"; the file goes at that admin's first sign-in.
        secret = self.data / "first-admin-password"
        text = secret.read_text() if secret.is_file() else ""
        match = re.search(r"^password:\s+(\S+)\s*$", text, re.MULTILINE)
        self.one_time_password = match.group(1) if match else None

    def _copy_binary(self, timeout: float = 300) -> None:
        self.binary = private_binary(timeout)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's output; when it crashed, first the lines that say where (Swift's backtracer
        prints the cause and the frames with source lines well above the end, where only threads at rest remain)."""
        text = self.log().splitlines()
        crash = [line for line in text if re.search(r"Fatal error|Program crashed|crashed:|\.swift:\d+|Crash|precondition|overflow", line)]
        head = ["--- crash lines ---", *crash[:60], "--- last lines ---"] if crash else []
        return "\n".join(head + text[-lines:]) + f"\n(the whole log: {self.log_path})"

    def cli(self, *args: str) -> str:
        """Runs a `trail-companion` command against this server's data folder and answers its stdout."""
        result = subprocess.run([str(self.binary), *args, "--root", str(REPO), "--data", str(self.data)],
                                cwd=REPO, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"trail-companion {' '.join(args)} failed ({result.returncode}):\n{result.stderr}{result.stdout}")
        return result.stdout

    def create_token(self, email: str = ADMIN_EMAIL, name: str = "e2e") -> str:
        lines = [line.strip() for line in self.cli("token", "create", "--email", email, "--name", name).splitlines() if line.strip()]
        return lines[-1]


# --------------------------------------------------------------------------------------------
# What the server stored: the management API and the SQLite file (read-only)


class ApiError(Exception):
    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class Api:
    """The management API with a bearer token."""

    def __init__(self, base_url: str, token: str):
        self.base_url = base_url.rstrip("/") + "/api/v1"
        self.token = token

    def request(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, error.read().decode(errors="replace")) from None
        return json.loads(text) if text else None

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body: dict):
        return self.request("POST", path, body)

    def patch(self, path: str, body: dict):
        return self.request("PATCH", path, body)

    def delete(self, path: str):
        return self.request("DELETE", path)

    # Shortcuts used to set up a scenario's starting point quickly.
    def tour(self, tour_id: int) -> dict:
        return self.get(f"/manage/tours/{tour_id}")

    def create_tour(self, site: str, name: str, frame: dict | None = None, description: str = "") -> dict:
        tour = self.post("/manage/tours", {"site": site, "name": name, "description": description})
        if frame:
            tour = self.patch(f"/manage/tours/{tour['id']}", {"frame": frame})
        return tour

    def add_waypoint(self, tour_id: int, name: str, latitude: float, longitude: float, description: str = "") -> dict:
        return self.post(f"/manage/tours/{tour_id}/waypoints",
                         {"name": name, "latitude": latitude, "longitude": longitude, "description": description})

    def upload(self, tour_id: int, waypoint_id: int, name: str, body: bytes) -> dict:
        """`POST /manage/tours/{id}/waypoints/{wid}/assets`: multipart/form-data with one `file` part; answers the asset."""
        asset = self.post_file(f"/manage/tours/{tour_id}/waypoints/{waypoint_id}/assets", name, body)
        if asset.get("kind") == "image":  # sites require alt text on images before submitting (the default)
            asset = self.patch(f"/manage/assets/{asset['id']}", {"altText": f"A test picture ({name})."})
        elif asset.get("kind") == "video":  # …captions on videos, scanned before the caller goes on
            captions = self.post_file(f"/manage/assets/{asset['id']}/captions", "captions.vtt", CAPTIONS)
            assert self.scanned_asset(captions["id"])["scanStatus"] == "clean", captions
        elif asset.get("kind") == "audio":  # …and a transcript on audio
            transcript = self.post(f"/manage/assets/{asset['id']}/transcript", {"text": "Wind over the lake."})
            assert self.scanned_asset(transcript["id"])["scanStatus"] == "clean", transcript
        return asset

    def post_file(self, path: str, name: str, body: bytes):
        """POSTs multipart/form-data with one `file` part (an upload, an import); answers the JSON."""
        boundary = "e2e-" + uuid.uuid4().hex
        data = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + body + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(self.base_url + path, data=data, method="POST")
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, error.read().decode(errors="replace")) from None

    def import_file(self, tour_id: int, name: str, body: bytes, dry_run: bool = False) -> dict:
        """`POST /manage/tours/{id}/import` (GeoJSON, GPX, KML, KMZ or CSV); answers `{dryRun, applied, plan}`."""
        return self.post_file(f"/manage/tours/{tour_id}/import" + ("?dryRun=true" if dry_run else ""), name, body)

    def export(self, tour_id: int) -> dict:
        """`GET /manage/tours/{id}/export.geojson`: the tour as an RFC 7946 FeatureCollection."""
        return self.get(f"/manage/tours/{tour_id}/export.geojson")

    def scanned_asset(self, asset_id: int, timeout: float = 60) -> dict:
        """The asset once the scanner has given its verdict (no longer `pending`)."""
        return wait_for(f"the scan of asset {asset_id}",
                        lambda: (a := self.get(f"/manage/assets/{asset_id}"))["scanStatus"] != "pending" and a, timeout)

    def publish_request(self, request_id: str) -> dict:
        return self.get(f"/manage/publish-requests/{request_id}")


class Store:
    """Reads `trail.sqlite` read-only, the way an operator would check what was stored."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def rows(self, sql: str, *params) -> list[dict]:
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        try:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(sql, params)]
        finally:
            connection.close()

    def row(self, sql: str, *params) -> dict | None:
        rows = self.rows(sql, *params)
        return rows[0] if rows else None

    def tour(self, tour_id: int) -> dict | None:
        return self.row("SELECT * FROM tour WHERE id = ?", tour_id)

    def waypoints(self, tour_id: int) -> list[dict]:
        return self.rows("SELECT * FROM waypoint WHERE tourId = ? ORDER BY position", tour_id)

    def audit(self, action_like: str, object_type: str | None = None) -> list[dict]:
        sql = "SELECT * FROM auditEvent WHERE action LIKE ?"
        params: list = [action_like]
        if object_type:
            sql += " AND objectType = ?"
            params.append(object_type)
        return self.rows(sql + " ORDER BY id", *params)

    def assets(self, waypoint_id: int) -> list[dict]:
        return self.rows("SELECT * FROM asset WHERE waypointId = ? ORDER BY position", waypoint_id)

    def uploads(self, waypoint_id: int) -> list[dict]:
        """tus uploads in progress (the `upload` table) for a waypoint."""
        return self.rows("SELECT * FROM upload WHERE waypointId = ? ORDER BY createdAt", waypoint_id)

    def publish_request(self, request_id: str) -> dict | None:
        return self.row("SELECT * FROM publishRequest WHERE id = ?", request_id)


# --------------------------------------------------------------------------------------------
# The processes the suite starts: none may outlive it


SUITE_MARK = "E2E_SUITE_RUN"  # in the environment of what the suite starts (not TRAIL_*: `Server` passes it on)
PROFILES: list[str] = []  # the profile folder of every Chromium the suite started
# nginx names its processes "nginx: master process …" / "nginx: worker process" (test_behind_nginx.py starts one).
_WATCHED = ("chromium", "chrome", "chromedriver", "chrome_crashpad_handler", "trail-companion", "nginx", "nginx:")


def mark_suite_processes() -> str:
    """Marks this run: every process started from now on (chromedriver, Chromium, servers) inherits the mark."""
    os.environ[SUITE_MARK] = uuid.uuid4().hex
    return os.environ[SUITE_MARK]


def _read_proc(pid: str, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:  # gone meanwhile, or another user's
        return b""


def suite_processes() -> list[str]:
    """The Chromium, chromedriver and trail-companion processes of this run still alive, as "pid command" lines: those
    with the run's mark in their environment, their descendants, the descendants of pytest, and Chromium's helpers
    that name one of the run's profile folders (even when orphaned)."""
    mark = f"{SUITE_MARK}={os.environ.get(SUITE_MARK, '')}".encode()
    me = os.getpid()
    processes = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        stat = _read_proc(entry.name, "stat").decode(errors="replace")
        if not stat or ")" not in stat:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if state in ("Z", "X"):  # exited, waiting to be reaped
            continue
        argv = [a.decode(errors="replace") for a in _read_proc(entry.name, "cmdline").split(b"\0") if a]
        marked = os.environ.get(SUITE_MARK) and mark in _read_proc(entry.name, "environ").split(b"\0")
        processes[int(entry.name)] = (int(parent), argv, bool(marked))

    def ours(pid: int) -> bool:
        seen = set()
        while pid in processes and pid not in seen:
            seen.add(pid)
            parent, argv, marked = processes[pid]
            if marked or parent == me or any(f"--user-data-dir={p}" in " ".join(argv) for p in PROFILES):
                return True
            pid = parent
        return False

    left = []
    for pid, (_, argv, _) in sorted(processes.items()):
        # Chromium's helpers rewrite their command line as one string: the program is its first word.
        program = Path(argv[0] if len(argv) > 1 else (argv or [""])[0].split(" ")[0]).name
        if any(program == w or program.endswith("-" + w) for w in _WATCHED) and ours(pid):
            left.append(f"{pid} {' '.join(argv)[:200]}")
    return left


# --------------------------------------------------------------------------------------------
# The browser


def chrome(width: int = 1440, height: int = 1000, arguments: tuple[str, ...] = ()) -> webdriver.Chrome:
    """Debian's headless Chromium through Debian's chromedriver; never Selenium Manager. `arguments`: more
    command-line switches (e.g. the `--ignore-certificate-errors-spki-list` of a throw-away certificate)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                     "--force-device-scale-factor=1", "--hide-scrollbars", "--lang=en-US",
                     # Instant scrolling: Bootstrap turns on smooth scrolling, and an element measured mid-scroll
                     # is not where the mouse then lands.
                     "--force-prefers-reduced-motion", "--disable-smooth-scrolling",
                     # Nothing but the server under test is contacted.
                     "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-default-apps", "--disable-features=Translate,MediaRouter,OptimizationHints", *arguments):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    # Chromium's helpers (zygote, renderers) do not keep the suite's mark in their environment, but name the profile.
    profile = (driver.capabilities.get("chrome") or {}).get("userDataDir")
    if profile:
        PROFILES.append(profile)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def set_viewport(driver: webdriver.Chrome, width: int, height: int, mobile: bool = False) -> None:
    """Emulates a viewport of exactly width × height CSS pixels (a phone when mobile)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 5 if mobile else 1})


def reset_viewport(driver: webdriver.Chrome) -> None:
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})


# Chrome logs the status of every failed load; pages that answer 401/404/422 on purpose are not script errors, and
# the panel maps' default basemap (OpenStreetMap's tiles, fetched by the browser) cannot load here: there is no network.
_EXPECTED_CONSOLE = re.compile(r"Failed to load resource: the server responded with a status of (401|403|404|409|422|429)"
                               r"|^https://tile\.openstreetmap\.org/\S+ - Failed to load resource: net::")


def console_errors(driver: webdriver.Chrome) -> list[str]:
    """Severe browser console entries since the last call: script errors, CSP refusals, missing modules."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and not _EXPECTED_CONSOLE.search(entry["message"])]


# --------------------------------------------------------------------------------------------
# Accessibility: axe-core through axe-selenium-python


def _axe_script() -> str:
    """The axe-core engine to inject. axe-selenium-python 2.1.6 (its last release for Python < 3.12) bundles
    axe-core 3.1.1 from 2018, which lacks the WCAG 2.1/2.2 rules and misjudges modern CSS; selenium-axe-python
    (in Tests/requirements.txt) bundles a current 4.x engine, driven here through axe-selenium-python's Axe."""
    import selenium_axe_python
    path = Path(selenium_axe_python.__file__).parent / "axe-core" / "axe.min.js"
    assert path.is_file(), f"{path} is missing: reinstall selenium-axe-python"
    return str(path)


BLOCKING_IMPACTS = ("serious", "critical")
AUDITED: list[str] = []  # every page state axe checked in this session, for the summary at the end


def axe_violations(driver: webdriver.Chrome, impacts=BLOCKING_IMPACTS, media: bool = True) -> list[dict]:
    """media=False: for pages whose <video>/<audio> files are test bytes, not real media. Before its media rules axe
    waits for every media element's metadata, up to 10 s, and such files never load any; the rules still run, on
    what the markup declares (autoplay, controls)."""
    from axe_selenium_python import Axe

    axe = Axe(driver, _axe_script())
    axe.inject()
    options = {"resultTypes": ["violations"]}
    if not media:
        options["preload"] = {"assets": ["cssom"]}
    results = axe.run(options=json.dumps(options))
    return [v for v in results["violations"] if v.get("impact") in impacts]


def axe_report(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"[{violation['impact']}] {violation['id']}: {violation['help']} ({violation['helpUrl']})")
        for node in violation["nodes"][:8]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node.get('failureSummary', '').strip()}".replace("\n", " / "))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# A person using the panel


@dataclass
class Account:
    email: str
    password: str
    name: str = ""


class Panel:
    """One browser on the panel: navigation, sign-in, the admin's chores, the map editor."""

    def __init__(self, driver: webdriver.Chrome, server: Server):
        self.driver = driver
        self.server = server

    # Navigation and reading ---------------------------------------------------------------

    def url(self, path: str) -> str:
        return self.server.base_url + path

    def open(self, path: str) -> None:
        self.driver.get(self.url(path))
        self.wait_ready()

    def path(self) -> str:
        url = self.driver.current_url
        return url[len(self.server.base_url):] if url.startswith(self.server.base_url) else url

    def wait(self, timeout: float = WAIT) -> WebDriverWait:
        return WebDriverWait(self.driver, timeout, ignored_exceptions=(StaleElementReferenceException,))

    def wait_ready(self) -> None:
        self.wait().until(lambda d: d.execute_script("return document.readyState") == "complete")

    def find(self, css: str) -> WebElement:
        return self.wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def visible(self, css: str) -> WebElement:
        return self.wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        return self.visible(css).text

    def heading(self) -> str:
        return self.text("h1")

    def notice(self) -> str:
        return self.text("main .alert-success")

    def submit(self, button: WebElement, confirm: str | None = None) -> None:
        """Clicks a link or a submit button (accepting its confirmation dialog, which must contain `confirm`) and waits for the next page."""
        self.driver.execute_script("window.__e2eOldPage = true; arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", button)
        button.click()
        if confirm is not None:
            question = self.accept_confirm()
            assert confirm in question, f"the confirmation asked {question!r}"
        self.wait_new_page()

    def wait_new_page(self) -> None:
        """Waits until the document that was shown before is replaced by a new, fully loaded one."""
        def loaded(driver):
            try:
                return driver.execute_script("return !window.__e2eOldPage && document.readyState === 'complete'")
            except WebDriverException:  # between two documents
                return False
        self.wait().until(loaded)

    def submit_form(self, form_css: str, **fields: str) -> None:
        """Fills the named fields of a form and presses its submit button."""
        form = self.find(form_css)
        for name, value in fields.items():
            self.fill(form.find_element(By.NAME, name), value)
        self.submit(form.find_element(By.CSS_SELECTOR, "[type=submit]"))

    def fill(self, element: WebElement, value: str) -> None:
        if element.tag_name == "select":
            from selenium.webdriver.support.ui import Select
            Select(element).select_by_value(value)
            return
        # A field that is still moving into view (a popup the map pans to show) is not yet interactable: wait for the
        # browser to let it be typed in, rather than for a time.
        def typed(_driver) -> bool:
            try:
                element.clear()
                element.send_keys(value)
                return True
            except ElementNotInteractableException:
                return False
        self.wait().until(typed)

    def accept_confirm(self) -> str:
        alert = self.wait().until(EC.alert_is_present())
        text = alert.text
        alert.accept()
        return text

    # Accessibility and layout -------------------------------------------------------------

    def assert_accessible(self, label: str | None = None, media: bool = True) -> None:
        """axe-core on the current page: no serious or critical violations (media=False: see `axe_violations`)."""
        violations = axe_violations(self.driver, media=media)
        AUDITED.append(label or self.path())
        assert not violations, f"axe on {label or self.path()}:\n{axe_report(violations)}"

    def horizontal_overflow(self) -> int:
        """How many CSS pixels the page is wider than the viewport (0 when there is no horizontal scrolling)."""
        return self.driver.execute_script(
            "return document.scrollingElement.scrollWidth - Math.min(window.innerWidth, document.documentElement.clientWidth)")

    def in_view_horizontally(self, element: WebElement) -> bool:
        return self.driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return r.width > 0 && r.height > 0 && r.left >= -0.5 && r.right <= document.documentElement.clientWidth + 0.5;", element)

    def screenshot(self, name: str, full_page: bool = True) -> Path:
        """A PNG of the page at the current width, written to SCREENSHOTS/<name>.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.driver.execute_script("window.scrollTo(0, 0); document.activeElement?.blur?.()")
        if full_page:
            size = self.driver.execute_script(
                "return [document.documentElement.clientWidth, Math.ceil(document.scrollingElement.scrollHeight)]")
            shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 6000), "scale": 1}})
            import base64
            path.write_bytes(base64.b64decode(shot["data"]))
        else:
            self.driver.save_screenshot(str(path))
        return path

    # Accounts ------------------------------------------------------------------------------

    def sign_in(self, email: str, password: str) -> None:
        self.open("/login")
        self.submit_form("form[action='/login']", email=email, password=password)

    def sign_out(self) -> None:
        self.submit(self.find("form[action='/logout'] button"))

    def change_password(self, current: str, new: str) -> None:
        if not self.path().startswith("/account/password"):
            self.open("/account/password")
        self.submit_form("form[action='/account/password']",
                         currentPassword=current, newPassword=new, confirmPassword=new)

    def create_user(self, email: str, name: str, admin: bool = False) -> str:
        """Creates a user on the admin page and answers the one-time password the page shows once."""
        self.open("/admin/users")
        form = self.find("form[action='/admin/users']")
        if admin:
            form.find_element(By.ID, "u-admin").click()
        self.submit_form("form[action='/admin/users']", email=email, displayName=name)
        match = re.search(r"One-time password: (\S+) \(", self.notice())
        assert match, f"no one-time password in the notice: {self.notice()!r}"
        return match.group(1)

    def create_site(self, slug: str, name: str, description: str = "", required_approvals: int = 1) -> None:
        self.open("/admin/sites")
        self.submit_form("form[action='/admin/sites']", name=name, slug=slug, description=description,
                         requiredApprovals=str(required_approvals))

    def add_member(self, site: str, email: str, role: str) -> None:
        self.open(f"/sites/{site}/members")
        self.submit_form(f"form[action='/sites/{site}/members']", email=email, role=role)

    # Tours ---------------------------------------------------------------------------------

    def create_tour(self, site: str, name: str, description: str = "") -> int:
        self.open(f"/sites/{site}")
        self.submit(self.find(f"a[href='/sites/{site}/tours/new']"))
        self.submit_form(f"form[action='/sites/{site}/tours']", name=name, description=description)
        match = re.fullmatch(r"/tours/(\d+)", self.path().split("#")[0])
        assert match, f"creating a tour led to {self.path()}"
        return int(match.group(1))

    def frame_inputs(self) -> dict[str, float]:
        return {key: float(self.find(f"#{key}").get_attribute("value") or "nan") for key in ("north", "south", "east", "west")}

    def waypoint_rows(self) -> list[tuple[str, str]]:
        """(name, coordinates text) of each row of the waypoint list, in page order."""
        return [(row.find_element(By.CSS_SELECTOR, ".waypoint-name").text, row.find_element(By.CSS_SELECTOR, ".small").text)
                for row in self.all("#waypoint-list > li")]

    # The map -------------------------------------------------------------------------------

    def wait_map_idle(self) -> None:
        """Waits for Leaflet's zoom/pan animation to end (it starts on the frame after the click)."""
        self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const pane = document.querySelector('#tour-map .leaflet-map-pane');
            const poll = () => (!pane || !pane.classList.contains('leaflet-zoom-anim'))
                ? requestAnimationFrame(() => requestAnimationFrame(() => done(true))) : setTimeout(poll, 20);
            requestAnimationFrame(() => requestAnimationFrame(poll));
        """)

    def center(self, element: WebElement) -> tuple[float, float]:
        """The element's centre in document coordinates (unchanged by scrolling)."""
        r = self.driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                       "return [r.left + scrollX + r.width / 2, r.top + scrollY + r.height / 2];", element)
        return r[0], r[1]

    def drag(self, element: WebElement, dx: int, dy: int) -> None:
        """Drags a Leaflet marker (a frame corner, a waypoint) so that it lands dx, dy pixels away.

        Leaflet's Draggable swallows the first mouse move beyond its 3 px click tolerance (the element does not
        jump when a drag starts), so a one-step `drag_and_drop_by_offset` moves nothing. As a hand does, this
        presses, nudges a few pixels, then moves in small steps, and waits a moment before releasing (Leaflet
        applies a move on the next animation frame)."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'})", element)
        nudge_x = 3 if dx > 0 else -3 if dx < 0 else 0
        nudge_y = 3 if dy > 0 else -3 if dy < 0 else 0
        if not (nudge_x or nudge_y):
            return
        steps = max(3, int(math.hypot(dx, dy) // 15))
        chain = ActionChains(self.driver, duration=20).click_and_hold(element).move_by_offset(nudge_x, nudge_y)
        done_x = done_y = 0
        for i in range(1, steps + 1):
            x, y = round(dx * i / steps), round(dy * i / steps)
            chain.move_by_offset(x - done_x, y - done_y)
            done_x, done_y = x, y
        chain.pause(0.1).release().perform()

    def click_map_at(self, x: float, y: float) -> None:
        """Clicks the map at document coordinates (x, y)."""
        map_element = self.find("#tour-map")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'nearest', behavior: 'instant'})", map_element)
        scroll_x, scroll_y = self.driver.execute_script("return [scrollX, scrollY]")
        # From the viewport's corner: an element origin would be the centre of the element's *visible* part.
        actions = ActionBuilder(self.driver)
        actions.pointer_action.move_to_location(round(x - scroll_x), round(y - scroll_y)).click()
        actions.perform()

    def wait_map_rendered(self) -> None:
        """Waits until the map's tiles are drawn and faded in (for screenshots). A basemap tile that cannot load (the
        default basemap is OpenStreetMap's, and the test machine has no network) counts once the browser gave up on it."""
        self.wait().until(lambda d: d.execute_script("""
            const tiles = [...document.querySelectorAll('#tour-map .leaflet-tile')];
            const settled = (t) => t.classList.contains('leaflet-tile-loaded')
              ? getComputedStyle(t).opacity === '1'
              : t.tagName === 'IMG' && t.complete && t.naturalWidth === 0;
            return tiles.length > 0 && tiles.every(settled);
        """))
        self.wait_map_idle()

    def drag_list_item(self, handle: WebElement, target: WebElement, after: bool = True) -> None:
        """Drags a SortableJS item by its handle onto `target` (its lower half when `after`), with native
        HTML5 drag and drop as a mouse makes it: press, move past Chromium's drag threshold, wait for the
        page's `dragstart`, move over the target in steps, release."""
        self.driver.execute_script("""
            arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});
            window.__e2eDragStarted = false;
            document.addEventListener('dragstart', () => { window.__e2eDragStarted = true; }, {capture: true, once: true});
        """, handle)
        sx, sy = self.center(handle)
        tx, ty = self.center(target)
        height = target.size["height"]
        ty += height * (0.3 if after else -0.3)
        ActionChains(self.driver, duration=20).move_to_element(handle).click_and_hold().move_by_offset(0, 4 if ty > sy else -4) \
            .move_by_offset(0, 4 if ty > sy else -4).perform()
        self.wait(5).until(lambda d: d.execute_script("return window.__e2eDragStarted"))
        chain = ActionChains(self.driver, duration=20)
        y = sy + (8 if ty > sy else -8)
        steps = max(4, int(abs(ty - y) // 10))
        for i in range(1, steps + 1):
            chain.move_by_offset(0, round(y + (ty - y) * i / steps) - round(y + (ty - y) * (i - 1) / steps))
        chain.pause(0.1).release().perform()

    # The keyboard -------------------------------------------------------------------------

    def press(self, *keys: str) -> None:
        ActionChains(self.driver).send_keys(*keys).perform()

    def press_and_wait(self, *keys: str) -> None:
        """Presses keys that submit a form (ENTER on a button) and waits for the next page."""
        self.driver.execute_script("window.__e2eOldPage = true")
        self.press(*keys)
        self.wait_new_page()

    def focused(self) -> WebElement:
        return self.driver.switch_to.active_element

    def tab_to(self, matches, limit: int = 150, backwards: bool = False) -> WebElement:
        """Presses TAB (or SHIFT+TAB) until the focused element satisfies `matches(element)`; answers it."""
        from selenium.webdriver.common.keys import Keys
        for _ in range(limit):
            if backwards:
                ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
            else:
                self.press(Keys.TAB)
            element = self.focused()
            if matches(element):
                return element
        raise AssertionError(f"TAB never reached the element (last focused: {self.describe(self.focused())})")

    def describe(self, element: WebElement) -> str:
        return self.driver.execute_script(
            "const e = arguments[0]; return e.outerHTML.slice(0, 160);", element)


    # Uploads and the network --------------------------------------------------------------

    def network(self, offline: bool = False, upload_bytes_per_second: int | None = None) -> None:
        """Chrome DevTools network emulation for this tab: uploads throttled to a rate, or no network at all (every
        request, loopback included, fails with net::ERR_INTERNET_DISCONNECTED). No arguments: the normal network."""
        self.driver.execute_cdp_cmd("Network.enable", {})
        self.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": upload_bytes_per_second or -1})

    def record_uploads(self) -> None:
        """From now on, every change of the uploader's rows (name, bar width, status, colour) is appended to
        sessionStorage, which outlives the reload the uploader does once every file is sent: `upload_history()`."""
        self.driver.execute_script(_UPLOAD_ROWS_JS + """
            sessionStorage.setItem('e2e-uploads', '[]');
            let last = '';
            const save = () => {
                const now = uploadRows();
                const text = JSON.stringify(now);
                if (text === last) return;
                last = text;
                const history = JSON.parse(sessionStorage.getItem('e2e-uploads') || '[]');
                history.push({t: Date.now(), rows: now});
                sessionStorage.setItem('e2e-uploads', JSON.stringify(history));
            };
            new MutationObserver(save).observe(document.getElementById('upload-progress'),
                {subtree: true, childList: true, attributes: true, characterData: true});
        """)

    def upload_history(self) -> list[dict]:
        """What `record_uploads()` saw: [{t: ms, rows: [{name, width, valueNow, status, done, failed, cancel}]}]."""
        return self.driver.execute_script("return JSON.parse(sessionStorage.getItem('e2e-uploads') || '[]')")

    def upload_rows(self) -> list[dict]:
        """The uploader's rows as shown now (see `upload_history()` for the fields)."""
        return self.driver.execute_script(_UPLOAD_ROWS_JS + "return uploadRows();")

    def wait_upload_row(self, name: str, condition, what: str, timeout: float = WAIT) -> dict:
        """Waits until the row of `name` satisfies condition(row); answers the row."""
        def probe(_):
            row = next((r for r in self.upload_rows() if r["name"] == name), None)
            return row if row is not None and condition(row) else False
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(probe)
        except Exception:
            raise AssertionError(f"the upload row of {name} never showed {what}: {self.upload_rows()}") from None

    def drop_files(self, files: dict[str, bytes], target: str = "#upload-drop") -> bool:
        """Drops files on an element as a file manager would: dragenter, dragover and drop events carrying a
        DataTransfer with the files (Selenium cannot drag from outside the browser). Answers whether the drop
        zone was highlighted during the dragover."""
        import base64
        payload = {name: base64.b64encode(body).decode() for name, body in files.items()}
        return self.driver.execute_script("""
            const [target, payload] = arguments;
            const zone = document.querySelector(target);
            const transfer = new DataTransfer();
            for (const [name, data] of Object.entries(payload)) {
                const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], name, {type: ''}));
            }
            const fire = (type) => zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
            fire('dragenter');
            fire('dragover');
            const highlighted = zone.classList.contains('upload-drop-active');
            fire('drop');
            return highlighted;
        """, target, payload)

    def settle_media(self) -> None:
        """For screenshots: waits until every <video>/<audio> has its metadata or has given up (test files are
        not real media: Chrome then shows an empty player)."""
        self.wait(30).until(lambda d: d.execute_script(
            "return [...document.querySelectorAll('video, audio')].every((m) => m.error || m.readyState >= 1 || m.networkState !== 2)"))

    # Reviews -------------------------------------------------------------------------------

    def review_badge(self) -> str | None:
        """The number on the menu's Reviews link (requests waiting for this user), or None when there is none."""
        badges = self.all("nav a[href='/reviews'] .badge")
        return badges[0].text.split()[0] if badges else None


# --------------------------------------------------------------------------------------------
# Map arithmetic: Leaflet's Web Mercator, to turn pixel offsets into the degrees a drag should give


def mercator_y(latitude: float) -> float:
    return math.log(math.tan(math.pi / 4 + math.radians(latitude) / 2))


def latitude_from_mercator(y: float) -> float:
    return math.degrees(2 * math.atan(math.exp(y)) - math.pi / 2)


def route_length_meters(positions) -> float:
    """Length of a [[longitude, latitude], ...] line: the haversine on the server's mean Earth radius (`Geo.distance`)."""
    radius = 6_371_008.8
    total = 0.0
    for (lng1, lat1, *_), (lng2, lat2, *_) in zip(positions, positions[1:]):
        p1, p2 = math.radians(lat1), math.radians(lat2)
        h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
        total += 2 * radius * math.asin(min(1.0, math.sqrt(h)))
    return total


@dataclass
class MapScale:
    """Pixels ↔ degrees on the current view, measured from two points whose pixel positions and coordinates are known."""
    x0: float
    y0: float
    latitude0: float
    longitude0: float
    degrees_per_px: float   # longitude
    mercator_per_px: float  # mercator y, grows northwards while pixels grow southwards

    @classmethod
    def between(cls, nw_px: tuple[float, float], se_px: tuple[float, float], north: float, west: float, south: float, east: float):
        return cls(nw_px[0], nw_px[1], north, west, (east - west) / (se_px[0] - nw_px[0]),
                   (mercator_y(north) - mercator_y(south)) / (se_px[1] - nw_px[1]))

    def to_latlng(self, x: float, y: float) -> tuple[float, float]:
        latitude = latitude_from_mercator(mercator_y(self.latitude0) - (y - self.y0) * self.mercator_per_px)
        return latitude, self.longitude0 + (x - self.x0) * self.degrees_per_px

    def tolerance(self, pixels: float = 1.5) -> tuple[float, float]:
        """(latitude, longitude) degrees that `pixels` pixels span here."""
        lat_a, lng_a = self.to_latlng(self.x0, self.y0)
        lat_b, lng_b = self.to_latlng(self.x0 + pixels, self.y0 + pixels)
        return abs(lat_a - lat_b), abs(lng_b - lng_a)


# --------------------------------------------------------------------------------------------
# Uploads: the uploader's rows, test files, the scanner's test signature, waiting


_UPLOAD_ROWS_JS = """
const uploadRows = () => [...document.querySelectorAll('#upload-progress > li')].map((li) => {
    const fill = li.querySelector('.progress-bar');
    return {
        name: li.querySelector('.me-auto')?.textContent || '',
        width: parseFloat((fill && fill.style.width) || '0'),
        valueNow: li.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow'),
        status: li.querySelector('.upload-status')?.textContent || '',
        done: !!fill && fill.classList.contains('bg-success'),
        failed: !!fill && fill.classList.contains('bg-danger'),
        cancel: !!li.querySelector('button'),
    };
});
"""

# The EICAR test file, and a ClamAV body signature (.ndb) that matches it: the scanner's verdicts are real.
EICAR_SIGNED_PART = b"EICAR-STANDARD-ANTIVIRUS-TEST-FILE"
EICAR = rb"X5O!P%@AP[4\PZX54(P^)7CC)7}$" + EICAR_SIGNED_PART + rb"!$H+H*"
EICAR_SIGNATURE_NAME = "Trail.Test.EICAR"
MP4_HEADER = b"\x00\x00\x00\x18ftypmp42"  # an ISO base media file of brand mp42: video/mp4 by its bytes


def write_signatures(folder: Path) -> Path:
    """A ClamAV signature folder for `serve --clamav-db`: one body signature for the EICAR test file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trail-test-eicar.ndb").write_text(f"{EICAR_SIGNATURE_NAME}:0:*:{EICAR_SIGNED_PART.hex()}\n")
    return folder


def video_bytes(size: int, seed: int | None = None) -> bytes:
    """An "MP4" of `size` bytes: the ftyp box's first bytes, then random ones (seeded: the same bytes each run)."""
    import random
    body = random.Random(seed).randbytes(size - len(MP4_HEADER)) if seed is not None else os.urandom(size - len(MP4_HEADER))
    return MP4_HEADER + body


def write_video(path: Path, size: int) -> Path:
    """A large "MP4" written in 1 MiB pieces of random bytes."""
    with open(path, "wb") as file:
        file.write(MP4_HEADER)
        left = size - len(MP4_HEADER)
        while left > 0:
            piece = min(left, 1 << 20)
            file.write(os.urandom(piece))
            left -= piece
    return Path(path)


def png_bytes(width: int = 480, height: int = 320) -> bytes:
    """A real PNG (a sky, a ridge and a meadow), made with zlib: the same bytes each run."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            ridge = height * 0.45 + 40 * math.sin(x / 53) + 18 * math.sin(x / 17)
            if y < ridge:
                shade = y / ridge
                raw += bytes((int(120 + 80 * shade), int(170 + 60 * shade), 235))
            elif y < height * 0.75:
                raw += bytes((47, int(95 + 30 * math.sin(x / 9) ** 2), 62))
            else:
                raw += bytes((int(120 + 40 * math.sin(x / 7 + y / 5) ** 2), 160, 70))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")


def sha256_of(path_or_bytes) -> str:
    import hashlib
    if isinstance(path_or_bytes, (bytes, bytearray)):
        return hashlib.sha256(path_or_bytes).hexdigest()
    digest = hashlib.sha256()
    with open(path_or_bytes, "rb") as file:
        for piece in iter(lambda: file.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def wait_for(what: str, probe, timeout: float = 60, interval: float = 0.1):
    """Polls probe() until it answers something true, and answers that; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# --------------------------------------------------------------------------------------------
# Deployment: the shipped nginx site (deploy/nginx.conf) with a throw-away certificate, in front of a server


DEPLOY = REPO / "deploy"
NGINX = os.environ.get("TRAIL_E2E_NGINX", "/usr/sbin/nginx")
OPENSSL = os.environ.get("TRAIL_E2E_OPENSSL", "/usr/bin/openssl")


def self_signed_certificate(folder: Path, name: str = "127.0.0.1") -> tuple[Path, Path]:
    """A throw-away certificate for 127.0.0.1 (and localhost), made by `openssl req -x509`: (cert.pem, key.pem)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName=IP:{name},DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def spki_sha256(cert: Path) -> str:
    """Base64 of the SHA-256 of the certificate's public key (SPKI): what Chromium's
    `--ignore-certificate-errors-spki-list` takes, so the browser accepts this one certificate and no other."""
    import base64
    import hashlib
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    public = x509.load_pem_x509_certificate(Path(cert).read_bytes()).public_key()
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def nginx_site(http_port: int, https_port: int, upstream_port: int, cert: Path, key: Path, folder: Path,
               data: Path | None = None, site: Path = DEPLOY / "nginx.conf") -> str:
    """deploy/nginx.conf with only what a test machine needs changed: loopback ports instead of 80/443 (and no IPv6
    listeners), the throw-away certificate, the test server's port, its data folder (`data`, for X-Accel-Redirect)
    and a read cache in `folder`. Each replaced text must occur exactly as often as listed, so a change of the
    shipped file's shape fails here rather than testing something else."""
    text = Path(site).read_text()
    substitutions = [
        ("    listen 80;\n", f"    listen 127.0.0.1:{http_port};\n", 1),
        ("    listen [::]:80;\n", "", 1),
        ("    listen 443 ssl;\n", f"    listen 127.0.0.1:{https_port} ssl;\n", 1),
        ("    listen [::]:443 ssl;\n", "", 1),
        ("/etc/letsencrypt/live/trail.example.org/fullchain.pem;", f"{cert};", 1),
        ("/etc/letsencrypt/live/trail.example.org/privkey.pem;", f"{key};", 1),
        ("server 127.0.0.1:8080;", f"server 127.0.0.1:{upstream_port};", 1),
        ("proxy_cache_path /var/cache/nginx/trail-companion ", f"proxy_cache_path {Path(folder) / 'cache'} ", 1),
        ("alias /var/lib/trail-companion/;", f"alias {data or Path(folder) / 'data'}/;", 1),
    ]
    for old, new, count in substitutions:
        found = text.count(old)
        assert found == count, f"{site}: expected {count} × {old!r}, found {found}"
        text = text.replace(old, new)
    return text


def nginx_main_config(folder: Path, site_file: Path) -> str:
    """The smallest main nginx.conf around a site file: in the foreground, every file it writes in `folder`
    (pid, logs, the five *_temp_path), run by whoever runs the test (as root: workers stay root too, since the
    default `nobody` cannot enter pytest's 0700 temp folders)."""
    folder = Path(folder)
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 2;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    default_type application/octet-stream;
    include {site_file};
}}
"""


def write_nginx_config(folder: Path, http_port: int, https_port: int, upstream_port: int, cert: Path, key: Path,
                       data: Path | None = None) -> Path:
    """Writes `site.conf` (from deploy/nginx.conf) and `nginx.conf` (including it) into `folder`; answers nginx.conf.
    `data`: the server's data folder, which nginx's internal location for X-Accel-Redirect maps to."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    site = folder / "site.conf"
    site.write_text(nginx_site(http_port, https_port, upstream_port, cert, key, folder, data))
    main = folder / "nginx.conf"
    main.write_text(nginx_main_config(folder, site))
    return main


def nginx_test(config: Path) -> subprocess.CompletedProcess:
    """`nginx -t` on a config written by `write_nginx_config`."""
    folder = Path(config).parent
    return subprocess.run([NGINX, "-t", "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(config)],
                          capture_output=True, text=True, timeout=30)


class Nginx:
    """Debian's nginx in the foreground with a config from `write_nginx_config`, stopped by `stop()`."""

    def __init__(self, config: Path):
        self.config = Path(config)
        self.folder = self.config.parent
        self.process: subprocess.Popen | None = None

    def start(self, port: int, timeout: float = 20) -> None:
        if not Path(NGINX).is_file():
            raise RuntimeError(f"{NGINX} is missing: apt-get install nginx-light (scripts/install-deps.sh --test)")
        self._out = open(self.folder / "stdout.log", "wb")
        self.process = subprocess.Popen([NGINX, "-p", str(self.folder), "-e", str(self.folder / "error.log"), "-c", str(self.config)],
                                        stdout=self._out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx did not listen on {port} within {timeout} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM: nginx's fast shutdown (the master ends its workers, then itself)."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if getattr(self, "_out", None):
            self._out.close()
            self._out = None

    def log_tail(self, lines: int = 30) -> str:
        parts = []
        for name in ("stdout.log", "error.log"):
            path = self.folder / name
            if path.exists():
                parts.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(parts)
