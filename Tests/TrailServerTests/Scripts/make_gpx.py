"""Writes GPX 1.1 fixtures with gpxpy: waypoints, a track with elevations, or both. Usage: make_gpx.py OUT MODE"""
import sys, gpxpy, gpxpy.gpx

out, mode = sys.argv[1], sys.argv[2]
gpx = gpxpy.gpx.GPX()
if mode in ("waypoints", "both"):
    for i, (lat, lon) in enumerate([(44.3927, -122.2449), (44.3963, -122.1419), (44.4012, -121.9948)]):
        w = gpxpy.gpx.GPXWaypoint(latitude=lat, longitude=lon, name=f"Stop {i + 1}", description=f"Stop number {i + 1}")
        gpx.waypoints.append(w)
if mode in ("track", "both"):
    track = gpxpy.gpx.GPXTrack(name="Trail")
    segment = gpxpy.gpx.GPXTrackSegment()
    track.segments.append(segment)
    gpx.tracks.append(track)
    for i in range(50):
        segment.points.append(gpxpy.gpx.GPXTrackPoint(44.39 + i * 0.0002, -122.24 + i * 0.005, elevation=1000 + (i % 10) * 5))
open(out, "w").write(gpx.to_xml(version="1.1"))
# The reference: length (haversine, R = 6371008.8 m) and ascent of the track as written.
import math
def hav(a, b):
    R = 6371008.8
    p1, p2 = math.radians(a.latitude), math.radians(b.latitude)
    dp, dl = p2 - p1, math.radians(b.longitude - a.longitude)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(min(1, math.sqrt(h)))
pts = [p for t in gpx.tracks for s in t.segments for p in s.points]
length = sum(hav(a, b) for a, b in zip(pts, pts[1:]))
ascent = sum(max(0, b.elevation - a.elevation) for a, b in zip(pts, pts[1:]))
import json
print(json.dumps({"length": length, "ascent": ascent, "points": len(pts), "waypoints": len(gpx.waypoints)}))
