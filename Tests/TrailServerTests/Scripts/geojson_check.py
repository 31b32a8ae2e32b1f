"""Checks a GeoJSON document against the RFC 7946 rules the export promises; prints a JSON report."""
import json, sys, math

doc = json.load(open(sys.argv[1]))
problems = []
def decimals_ok(x):
    text = repr(float(x))
    return '.' not in text or len(text.split('.')[1].rstrip('0')) <= 7 or 'e' in text
def position(p, where):
    if not (isinstance(p, list) and len(p) in (2, 3)):
        problems.append(f"{where}: not a position"); return
    lon, lat = p[0], p[1]
    if not (-180 <= lon <= 180 and -90 <= lat <= 90): problems.append(f"{where}: out of range {p}")
    if not all(decimals_ok(v) for v in p[:2]): problems.append(f"{where}: more than 7 decimals {p}")
if doc.get("type") != "FeatureCollection": problems.append("not a FeatureCollection")
bbox = doc.get("bbox")
if not (isinstance(bbox, list) and len(bbox) == 4 and bbox[0] <= bbox[2] and bbox[1] <= bbox[3]):
    problems.append(f"bbox is not [west, south, east, north]: {bbox}")
kinds = {"Point": 0, "Polygon": 0, "LineString": 0}
for i, f in enumerate(doc.get("features", [])):
    g = f.get("geometry", {})
    t = g.get("type")
    kinds[t] = kinds.get(t, 0) + 1
    if t == "Point":
        position(g["coordinates"], f"feature {i}")
        if not f.get("properties", {}).get("name"): problems.append(f"feature {i}: Point without name")
        lon, lat = g["coordinates"][:2]
        if bbox and not (bbox[0] <= lon <= bbox[2] and bbox[1] <= lat <= bbox[3]): problems.append(f"feature {i}: outside bbox")
    elif t == "Polygon":
        ring = g["coordinates"][0]
        for j, p in enumerate(ring): position(p, f"feature {i} ring {j}")
        if ring[0] != ring[-1]: problems.append(f"feature {i}: ring not closed")
        area = sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:]))
        if area <= 0: problems.append(f"feature {i}: exterior ring is not counterclockwise")
    elif t == "LineString":
        for j, p in enumerate(g["coordinates"]): position(p, f"feature {i} point {j}")
print(json.dumps({"problems": problems, "kinds": kinds}))
