"""A crafted MBTiles upload cannot make the real server build a large value in memory.

The file is 12 KB: its `tiles` is a view whose one tile is `CAST(x'89504E47…' || zeroblob(500 MB) AS BLOB)`. A
reader that evaluated the view would hold half a gigabyte (twice, once copied). The server refuses the file at upload
(the view is named in the message) and its peak resident memory, read from /proc for the server process alone,
stays within a bound far below the bomb.
"""
import sqlite3
from pathlib import Path

import pytest

from support import ApiError

BOMB_BYTES = 500_000_000
FRAME = {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}


def peak_rss(pid: int) -> int:
    """VmHWM of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


def write_bomb(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(f"""
        CREATE TABLE metadata (name TEXT, value TEXT);
        INSERT INTO metadata VALUES ('name', 'Bomb'), ('format', 'png'), ('minzoom', '10'), ('maxzoom', '10');
        CREATE VIEW tiles AS SELECT 10 AS zoom_level, 163 AS tile_column, 654 AS tile_row,
          CAST(x'89504E470D0A1A0A' || zeroblob({BOMB_BYTES}) AS BLOB) AS tile_data;
    """)
    db.commit()
    db.close()


def test_a_view_bomb_is_refused_and_the_servers_peak_memory_stays_flat(server, api, e2e_site, tmp_path):
    bomb = tmp_path / "bomb.mbtiles"
    write_bomb(bomb)
    assert bomb.stat().st_size < 64 * 1024
    tour = api.create_tour(e2e_site, "Hostile tiles", frame=FRAME)
    pid = server.process.pid
    # Writing 5 to clear_refs resets the peak to the current resident size (Linux 4.0+).
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = peak_rss(pid)
    for _ in range(3):
        with pytest.raises(ApiError) as refused:
            api.post_file(f"/manage/tours/{tour['id']}/tiles", "bomb.mbtiles", bomb.read_bytes())
        assert refused.value.status == 422, refused.value.body
        assert "is a view, not a table" in refused.value.body
    growth = peak_rss(pid) - before
    assert growth < 64 * 1024 * 1024, f"the server's peak RSS grew by {growth / 2**20:.0f} MiB"
    assert api.get(f"/manage/tours/{tour['id']}")["id"] == tour["id"]
