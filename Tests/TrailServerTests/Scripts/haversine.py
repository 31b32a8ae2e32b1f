"""Reference route length by haversine (R = 6371008.8 m) for a JSON list of [lon, lat] read from argv[1]."""
import json, math, sys
pts = json.loads(sys.argv[1])
R = 6371008.8
total = 0.0
for (l1, p1), (l2, p2) in zip(pts, pts[1:]):
    f1, f2 = math.radians(p1), math.radians(p2)
    h = math.sin((f2 - f1) / 2) ** 2 + math.cos(f1) * math.cos(f2) * math.sin(math.radians(l2 - l1) / 2) ** 2
    total += 2 * R * math.asin(min(1, math.sqrt(h)))
print(json.dumps({"length": total}))
