"""Writes made by another process reach the read API: the CLI run beside a serving server commits through its own
database connection, which the server's own change tracking does not see. The server makes its read answers from the
database on every request (the one cache in front of them is nginx's, for a second), so a commit made elsewhere is in
the very next answer."""
from __future__ import annotations

import json
import urllib.request

import pytest

from support import Server


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


def test_a_site_the_cli_creates_beside_the_server_is_listed_at_once(server):
    server.cli("site", "create", "--slug", "first", "--name", "First District")
    assert site_slugs(server) == ["first"]
    # Asked again and again: the same answer (the case a review once found stale for good).
    for _ in range(3):
        assert site_slugs(server) == ["first"]
    server.cli("site", "create", "--slug", "second", "--name", "Second District")
    assert site_slugs(server) == ["first", "second"]
