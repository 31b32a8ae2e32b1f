#!/usr/bin/env python3
"""A v1 package reader that knows nothing of visitor content (run by TriggerZoneTests): Python's zipfile and the
`cryptography` package, written from docs/package-format.md only.

    package_v1_check.py ZIP PUBLIC_KEY_BASE64

Checks manifest.sig (raw Ed25519 over the exact bytes of manifest.json), then every file the manifest lists (size and
SHA-256), ignoring keys it does not know. Prints one JSON line: {"valid": bool, "problems": [...], "manifest": {...}}.
"""
import base64
import hashlib
import json
import sys
import zipfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def main():
    path, key = sys.argv[1], Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[2]))
    problems = []
    with zipfile.ZipFile(path) as package:
        manifest_bytes = package.read("manifest.json")
        try:
            key.verify(package.read("manifest.sig"), manifest_bytes)
        except InvalidSignature:
            problems.append("manifest.sig does not verify")
        manifest = json.loads(manifest_bytes)
        listed = [asset for waypoint in manifest["waypoints"] for asset in waypoint["assets"]]
        for extra in ("geoJSON", "tiles"):
            if isinstance(manifest.get(extra), dict):
                listed.append(manifest[extra])
        for entry in listed:
            data = package.read(entry["path"])
            if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
                problems.append(f"{entry['path']} does not match the manifest")
    print(json.dumps({"valid": not problems, "problems": problems, "manifest": manifest}))


if __name__ == "__main__":
    main()
