"""The files of deploy/ as an operator installs them: nginx accepts the site, systemd accepts the units, and
they agree with the server they run.

- `nginx -t` on deploy/nginx.conf (with the test ports and a throw-away certificate, as test_behind_nginx.py runs it):
  no error, no warning;
- the site's upload location (unbuffered, large bodies) covers every upload route of the API (openapi.json) and of the
  panel's forms (Templates/), and nothing else; its download location covers the package and file downloads;
- `systemd-analyze verify` on the service, the backup service and its timer: no unknown directive, no bad value.
  `verify` checks that ExecStart's program exists, so it runs on copies whose ExecStart names the built binary
  instead of /usr/local/bin/trail-companion; every other line is the shipped one;
- every flag of the service's ExecStart is one `serve` knows, and the service, the nginx upstream and the sandbox's
  writable path agree (port, data folder, trusted proxy);
- the backup service's command, run as written on a scratch data folder, makes a backup that `backup verify` accepts.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from support import (DEPLOY, REPO, Server, free_port, nginx_test, self_signed_certificate, write_nginx_config)

SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"
SERVICE = DEPLOY / "trail-companion.service"
BACKUP_SERVICE = DEPLOY / "trail-companion-backup.service"
BACKUP_TIMER = DEPLOY / "trail-companion-backup.timer"
INSTALLED_BINARY = "/usr/local/bin/trail-companion"


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    """A private copy of the built binary (a rebuild of .build/ cannot pull it away meanwhile), removed at the end."""
    folder = tmp_path_factory.mktemp("deploy-files")
    server = Server(folder / "data")
    server._copy_binary()
    yield server.binary
    shutil.rmtree(folder, ignore_errors=True)


def unit_settings(path: Path) -> dict[str, list[str]]:
    """`Key=value` lines of a unit file, by key (a key may repeat), comments and sections left out."""
    settings: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def exec_start(path: Path) -> list[str]:
    [command] = unit_settings(path)["ExecStart"]
    return shlex.split(command)


def nginx_location(pattern_of_directive: str) -> re.Pattern:
    """The regex of the one `location ~ …` block of deploy/nginx.conf that holds the directive."""
    text = (DEPLOY / "nginx.conf").read_text()
    blocks = re.findall(r"location ~ (\S+) \{(.*?)\n    \}", text, re.DOTALL)
    matching = [regex for regex, body in blocks if re.search(rf"^\s*{pattern_of_directive}", body, re.MULTILINE)]
    assert len(matching) == 1, f"expected one regex location with {pattern_of_directive!r}, found {matching}"
    return re.compile(matching[0])


# --------------------------------------------------------------------------------------------
# nginx


def test_nginx_accepts_the_shipped_site(tmp_path):
    cert, key = self_signed_certificate(tmp_path / "tls")
    config = write_nginx_config(tmp_path / "nginx", free_port(), free_port(), free_port(), cert, key)
    result = nginx_test(config)
    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr and "test is successful" in result.stderr, result.stderr
    complaints = [line for line in result.stderr.splitlines() if re.search(r"\[(warn|emerg|alert|crit|error)\]", line)]
    assert not complaints, "nginx -t complained:\n" + "\n".join(complaints)


def sample_path(template: str) -> str:
    """An OpenAPI or panel path with its parameters filled in as a client would."""
    values = {"uploadId": str(uuid.uuid4()), "sha256": "ab" * 32, "id": "17", "version": "3"}
    return re.sub(r"\{+\s*([\w.]+)\s*\}+", lambda m: values.get(m.group(1).split(".")[-1], "42"), template)


def upload_routes() -> list[str]:
    """Every route that takes a file: the API's operations with a multipart or tus body, the panel's multipart forms."""
    document = json.loads((REPO / "openapi.json").read_text())
    routes = []
    for path, operations in document["paths"].items():
        for operation in operations.values():
            content = (operation.get("requestBody") or {}).get("content", {}) if isinstance(operation, dict) else {}
            if {"multipart/form-data", "application/offset+octet-stream"} & set(content):
                routes.append("/api/v1" + sample_path(path))
    for template in sorted((REPO / "Templates").glob("*.mustache")):
        for action in re.findall(r'<form[^>]*action="([^"]+)"[^>]*enctype="multipart/form-data"', template.read_text()):
            routes.append(sample_path(action.split("?", 1)[0]))
    return routes


def test_the_upload_location_covers_every_upload_route_and_nothing_else():
    uploads = nginx_location("proxy_request_buffering off;")
    routes = upload_routes()
    assert len(routes) >= 7, routes  # 4 API operations (assets, tiles, import, tus PATCH), 3 panel forms
    missed = [route for route in routes if not uploads.fullmatch(route)]
    assert not missed, f"uploads that would be buffered and capped at 1 MiB by nginx: {missed}"
    for route in ("/api/v1/manage/uploads", f"/api/v1/manage/uploads/{uuid.uuid4()}"):  # tus creation, HEAD, PATCH
        assert uploads.fullmatch(route), route
    for other in ("/login", "/api/v1/manage/tours", "/api/v1/manage/tours/3", "/tours/3/waypoints/4", "/api/v1/catalog",
                  "/api/v1/manage/tours/3/waypoints/4", "/tours/3/export.geojson", "/api/v1/manage/uploadsX",
                  "/assets/3/describe", "/api/v1/manage/assets/3", "/assets/3/captionsX"):
        assert not uploads.fullmatch(other), f"{other} is not an upload"


def test_the_download_location_covers_package_and_file_downloads():
    downloads = nginx_location("proxy_buffering off;")
    document = json.loads((REPO / "openapi.json").read_text())
    routes = ["/api/v1" + sample_path(p) for p in document["paths"] if p.endswith("/download") or p.startswith("/files/")]
    assert len(routes) == 3, routes
    routes += ["/assets/42/content", "/requests/42/assets/3"]  # the panel's media previews (videos play in ranges)
    missed = [route for route in routes if not downloads.fullmatch(route)]
    assert not missed, f"downloads nginx would buffer: {missed}"
    for other in ("/api/v1/packages/17", "/api/v1/catalog", "/api/v1/packages/17/updates", "/assets/42/delete"):
        assert not downloads.fullmatch(other), f"{other} is not a large download"


# --------------------------------------------------------------------------------------------
# systemd


def test_systemd_accepts_the_units(tmp_path, binary):
    assert Path(SYSTEMD_ANALYZE).is_file(), f"{SYSTEMD_ANALYZE} is missing: apt-get install systemd"
    copies = []
    for unit in (SERVICE, BACKUP_SERVICE, BACKUP_TIMER):
        text = unit.read_text()
        copy = tmp_path / unit.name  # the same name: the timer starts the service of its own name
        changed = text.replace(f"ExecStart={INSTALLED_BINARY} ", f"ExecStart={binary} ")
        differing = [(a, b) for a, b in zip(text.splitlines(), changed.splitlines()) if a != b]
        assert all(a.startswith("ExecStart=") for a, _ in differing), differing
        assert len(differing) == (0 if unit.suffix == ".timer" else 1), f"{unit.name}: ExecStart must run {INSTALLED_BINARY}"
        copy.write_text(changed)
        copies.append(str(copy))
    result = subprocess.run([SYSTEMD_ANALYZE, "verify", "--man=no", *copies], capture_output=True, text=True, timeout=60)
    # verify reports unknown keys and unparsable values on stderr but still exits 0: both must be clean.
    assert result.returncode == 0 and not result.stderr.strip(), \
        f"systemd-analyze verify ({result.returncode}):\n{result.stderr}{result.stdout}"


def test_the_service_is_sandboxed_and_stops_gracefully():
    settings = {key: values[-1] for key, values in unit_settings(SERVICE).items()}
    assert settings["User"] == "trail-companion" and settings["Group"] == "trail-companion"
    for key, value in {"ProtectSystem": "strict", "NoNewPrivileges": "yes", "PrivateTmp": "yes", "ProtectHome": "yes",
                       "Restart": "on-failure", "CapabilityBoundingSet": "",
                       "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX"}.items():
        assert settings.get(key) == value, f"{key}={settings.get(key)!r}, expected {value!r}"
    # The server drains running requests for up to 30 s after SIGTERM: systemd must wait longer before SIGKILL.
    stop = re.fullmatch(r"(\d+)(s|min)?", settings["TimeoutStopSec"])
    assert stop and int(stop.group(1)) * (60 if stop.group(2) == "min" else 1) > 30, settings["TimeoutStopSec"]
    backup = {key: values[-1] for key, values in unit_settings(BACKUP_SERVICE).items()}
    assert backup["User"] == "trail-companion" and backup["ProtectSystem"] == "strict" and backup["Type"] == "oneshot"
    assert unit_settings(BACKUP_TIMER)["OnCalendar"], "the timer has no schedule"


def flags(argv: list[str]) -> dict[str, str]:
    """`--flag value` pairs of a command line (every flag of these units takes a value)."""
    found = {}
    for index, word in enumerate(argv):
        if word.startswith("--"):
            assert index + 1 < len(argv) and not argv[index + 1].startswith("--"), f"{word} has no value in {argv}"
            found[word] = argv[index + 1]
    return found


def test_the_service_command_line_agrees_with_serve_and_nginx(binary):
    argv = exec_start(SERVICE)
    assert argv[:2] == [INSTALLED_BINARY, "serve"], argv
    given = flags(argv)
    help_text = subprocess.run([str(binary), "serve", "--help"], capture_output=True, text=True, timeout=30, check=True).stdout
    unknown = [flag for flag in given if not re.search(rf"(^|\s){re.escape(flag)}\b", help_text)]
    assert not unknown, f"flags `serve` does not know: {unknown}"

    settings = unit_settings(SERVICE)
    assert given["--data"] in " ".join(settings["ReadWritePaths"]).split(), "the data folder must be writable in the sandbox"
    assert given["--data"] == "/var/lib/" + settings["StateDirectory"][-1]
    assert given["--hostname"] == "127.0.0.1", "only nginx, on this machine, may reach the server"
    assert given["--public-url"].startswith("https://"), "cookies are Secure only with an https public URL"
    site = (DEPLOY / "nginx.conf").read_text()
    upstream = re.search(r"upstream trail_companion \{\s*server (\S+);", site).group(1)
    assert upstream == f"{given['--hostname']}:{given['--port']}", f"nginx sends to {upstream}"
    assert given["--trusted-proxies"] == "127.0.0.1/32", "nginx reaches the server from 127.0.0.1 and from nothing else"
    host = given["--public-url"].removeprefix("https://").split("/")[0]
    assert re.findall(r"server_name (\S+);", site) == [host, host], "nginx's server_name is the public URL's host"


def test_the_backup_command_makes_a_backup_that_verifies(tmp_path, binary):
    """The backup unit's ExecStart as written, with its three folders moved to scratch ones: the shipped root
    (this checkout), a data folder that `serve` prepared, and a new backup folder."""
    argv = exec_start(BACKUP_SERVICE)
    assert argv[:2] == [INSTALLED_BINARY, "backup"], argv
    given = flags(argv)
    service = flags(exec_start(SERVICE))
    assert (given["--root"], given["--data"]) == (service["--root"], service["--data"]), "the backup must read the server's folders"
    assert given["--to"] in " ".join(unit_settings(BACKUP_SERVICE)["ReadWritePaths"]).split()
    assert given["--data"] in " ".join(unit_settings(BACKUP_SERVICE)["ReadWritePaths"]).split()

    data, backups = tmp_path / "data", tmp_path / "backups"
    server = Server(data, demo=True)
    try:
        server.start()  # a real data folder: database, signing key, the demo site
        server.stop()
        moved = {given["--root"]: str(REPO), given["--data"]: str(data), given["--to"]: str(backups)}
        command = [str(binary), *[moved.get(word, word) for word in argv[1:]]]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{shlex.join(command)} ({result.returncode}):\n{result.stderr}{result.stdout}"
        assert (backups / "backup.json").is_file(), sorted(p.name for p in backups.iterdir()) if backups.exists() else "no backup folder"
        verified = subprocess.run([str(binary), "backup", "verify", str(backups)], capture_output=True, text=True, timeout=120)
        assert verified.returncode == 0, f"backup verify ({verified.returncode}):\n{verified.stderr}{verified.stdout}"
    finally:
        server.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)
