"""Reads a package's MBTiles with Python's zipfile and sqlite3 (and checks it with mercantile), for the Tiles tests.

    mbtiles_read.py <package.zip | file.mbtiles> [west south east north]

Prints one JSON line: the metadata, the schema (tables and views), every tile of the `tiles` view as
[zoom_level, tile_column, tile_row, sha256 of tile_data], the number of rows of `images` and `map` (when present),
PRAGMA integrity_check and freelist_count, the SHA-256 and size of the MBTiles file, and, when the frame is given,
mercantile's tiles for the frame at the file's zoom range as [z, x, y] (XYZ rows).
"""
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import zipfile

import mercantile

source = sys.argv[1]
work = tempfile.mkdtemp()
if zipfile.is_zipfile(source):
    with zipfile.ZipFile(source) as archive:
        path = archive.extract("tiles/map.mbtiles", work)
else:
    path = source

with open(path, "rb") as handle:
    data = handle.read()
answer = {"fileSHA256": hashlib.sha256(data).hexdigest(), "fileSize": len(data)}

db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
answer["metadata"] = {name: value for name, value in db.execute("SELECT name, value FROM metadata")}
answer["schema"] = {name: kind for kind, name in db.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')")}
answer["tiles"] = [
    [z, x, row, hashlib.sha256(blob).hexdigest()]
    for z, x, row, blob in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY 1, 2, 3")
]
for table in ("images", "map"):
    if answer["schema"].get(table) == "table":
        answer[table + "Count"] = db.execute("SELECT COUNT(*) FROM %s" % table).fetchone()[0]
answer["integrity"] = db.execute("PRAGMA integrity_check").fetchone()[0]
answer["freelist"] = db.execute("PRAGMA freelist_count").fetchone()[0]
answer["journalMode"] = db.execute("PRAGMA journal_mode").fetchone()[0]
db.close()

if len(sys.argv) == 6:
    west, south, east, north = (float(v) for v in sys.argv[2:6])
    low, high = int(answer["metadata"]["minzoom"]), int(answer["metadata"]["maxzoom"])
    answer["expected"] = [[t.z, t.x, t.y] for t in mercantile.tiles(west, south, east, north, list(range(low, high + 1)))]
print(json.dumps(answer))
