"""An app's delta update, written from the documentation only (urllib + cryptography, no project code).

    delta_update.py BASE_URL PACKAGE_ID INSTALLED_ZIP WORK_FOLDER

Installs INSTALLED_ZIP (an older version) into WORK_FOLDER/installed, then updates it to the catalog's version:
verify the signed catalog with the pinned key (GET /signing-key, as an app would at build time), fetch the catalog
entry's manifestURL, verify Manifest-Signature over the exact bytes, check packageId and version against the catalog,
reuse every local file whose SHA-256 the new manifest lists, fetch the rest from /files/{sha256}, check size and
SHA-256 of each, build the new folder beside the old one, fsync and swap it in with a rename. Prints one JSON line.
"""
import base64
import hashlib
import json
import os
import shutil
import sys
import urllib.parse
import urllib.request
import zipfile

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def get(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read(), response.headers


def listed_files(manifest):
    files = [(a["path"], a["sha256"], a["size"]) for w in manifest["waypoints"] for a in w["assets"]]
    for key in ("tiles", "geoJSON"):
        if manifest.get(key):
            files.append((manifest[key]["path"], manifest[key]["sha256"], manifest[key]["size"]))
    index = (manifest.get("tiles") or {}).get("index")
    if index:
        files.append((index["path"], index["sha256"], index["size"]))
    return files


def safe(path):
    parts = path.split("/")
    return (path and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts))


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main():
    base, package_id, installed_zip, work = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4]
    api = base + "/api/v1"
    key_body, _ = get(api + "/signing-key")
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(json.loads(key_body)["publicKey"]))

    installed = os.path.join(work, "installed")
    with zipfile.ZipFile(installed_zip) as archive:
        archive.extractall(installed)
    with open(os.path.join(installed, "manifest.json"), "rb") as handle:
        old = json.loads(handle.read())

    catalog_body, catalog_headers = get(api + "/catalog")
    key.verify(base64.b64decode(catalog_headers["Catalog-Signature"]), catalog_body)
    entry = next(p for p in json.loads(catalog_body)["packages"] if p["id"] == package_id)

    # The catalog's URLs name the server's public URL; this test server listens on a port of its own, so only the
    # path is taken (an app uses the URL as it is).
    manifest_body, manifest_headers = get(base + urllib.parse.urlsplit(entry["manifestURL"]).path)
    key.verify(base64.b64decode(manifest_headers["Manifest-Signature"]), manifest_body)
    new = json.loads(manifest_body)
    assert new["packageId"] == package_id and new["version"] == entry["version"], "the manifest is not the catalog's version"
    files = listed_files(new)
    assert all(safe(path) for path, _, _ in files), "unsafe path in the manifest"
    assert len({p.lower() for p, _, _ in files}) == len(files), "paths clash by case"

    # The plan is a convenience; its hashes must agree with the signed manifest.
    plan_body, _ = get(f"{api}/packages/{package_id}/updates?from={old['version']}")
    plan = json.loads(plan_body)
    listed = {sha for _, sha, _ in files}
    assert all(f["sha256"] in listed for f in plan["files"]), "the plan names a file the manifest does not"

    local = {}
    for path, sha, _ in listed_files(old):
        local[sha] = os.path.join(installed, path)
    staging = os.path.join(work, "installed.new")
    shutil.rmtree(staging, ignore_errors=True)
    downloaded = reused = fetched_files = 0
    for path, sha, size in files:
        target = os.path.join(staging, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if sha in local and os.path.getsize(local[sha]) == size and sha256_file(local[sha]) == sha:
            shutil.copyfile(local[sha], target)
            reused += 1
        else:
            body, headers = get(f"{api}/files/{sha}")
            assert headers["ETag"] == f'"{sha}"', headers["ETag"]
            assert len(body) == size and hashlib.sha256(body).hexdigest() == sha, f"{path}: wrong bytes"
            with open(target, "wb") as handle:
                handle.write(body)
            downloaded += len(body)
            fetched_files += 1
        with open(target, "rb+") as handle:
            os.fsync(handle.fileno())
    with open(os.path.join(staging, "manifest.json"), "wb") as handle:
        handle.write(manifest_body)
        os.fsync(handle.fileno())
    with open(os.path.join(staging, "manifest.sig"), "wb") as handle:
        handle.write(base64.b64decode(manifest_headers["Manifest-Signature"]))
        os.fsync(handle.fileno())
    old_folder = os.path.join(work, "installed.old")
    os.rename(installed, old_folder)
    os.rename(staging, installed)
    shutil.rmtree(old_folder)

    # Every file of the folder matches the signed manifest, and nothing else is there.
    present = set()
    for root, _, names in os.walk(installed):
        for name in names:
            present.add(os.path.relpath(os.path.join(root, name), installed))
    assert present == {p for p, _, _ in files} | {"manifest.json", "manifest.sig"}, sorted(present)
    for path, sha, size in files:
        assert sha256_file(os.path.join(installed, path)) == sha, path
    print(json.dumps({"version": new["version"], "files": len(files), "downloaded": downloaded, "fetched": fetched_files,
                      "reused": reused, "planDownloadSize": plan["downloadSize"]}))


if __name__ == "__main__":
    main()
