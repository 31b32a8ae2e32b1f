"""Writes made by another process reach the read API: the CLI run beside a serving server commits through its own
database connection, which the server's own change tracking does not see. The answers the server keeps
(`/api/v1/sites`, and the same answer sent again without the router) follow within a second."""
from __future__ import annotations

import json
import time
import urllib.request

import pytest

from support import Server, wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("other-process-data"), demo=False)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def site_slugs(server: Server) -> list[str]:
    with urllib.request.urlopen(f"{server.base_url}/api/v1/sites", timeout=10) as response:
        return [site["slug"] for site in json.loads(response.read())]


def test_a_site_the_cli_creates_beside_the_server_is_listed_within_a_second(server):
    server.cli("site", "create", "--slug", "first", "--name", "First District")
    wait_for("the first site", lambda: "first" in site_slugs(server), timeout=10)
    # Asked again and again, the answer is now the kept one: the case the review found stale for good.
    for _ in range(3):
        assert site_slugs(server) == ["first"]

    server.cli("site", "create", "--slug", "second", "--name", "Second District")
    made = time.monotonic()
    wait_for("the second site", lambda: "second" in site_slugs(server), timeout=10, interval=0.05)
    seen_after = time.monotonic() - made
    # The server reads SQLite's data_version twice a second; a commit elsewhere shows within one.
    assert seen_after < 1.0, f"a site created by the CLI was listed only after {seen_after:.2f} s"
