"""Tile math with mercantile, for TilesMathTests: reads a JSON request on stdin, prints one JSON line.

Request: {"points": [[lat, lon, zoom], ...], "frames": [[west, south, east, north, minzoom, maxzoom], ...],
          "bounds": [[x, y, z], ...]}
Answer:  {"version": mercantile.__version__, "points": [[x, y], ...], "frames": [[count, [[x, y, z], ...]], ...],
          "bounds": [[west, south, east, north], ...]}
"""
import json
import sys

import mercantile

request = json.load(sys.stdin)
points = []
for lat, lon, zoom in request.get("points", []):
    tile = mercantile.tile(lon, lat, zoom)
    points.append([tile.x, tile.y])
frames = []
for west, south, east, north, low, high in request.get("frames", []):
    tiles = list(mercantile.tiles(west, south, east, north, list(range(low, high + 1))))
    frames.append([len(tiles), [[t.x, t.y, t.z] for t in tiles]])
bounds = [list(mercantile.bounds(x, y, z)) for x, y, z in request.get("bounds", [])]
print(json.dumps({"version": mercantile.__version__, "points": points, "frames": frames, "bounds": bounds}))
