#!/usr/bin/env python3
"""An independent reader of Trail Companion packages (run by the Publishing*Tests): Python's zipfile.

    package_zip.py inspect <zip>            one JSON line: every entry (name, size, compressed size,
                                            method, SHA-256 of the content read through zipfile, which
                                            also checks each CRC-32), the duplicates, manifest.json
                                            parsed, testzip(), whether a ZIP64 end record is present,
                                            and the SHA-256 of the whole file
    package_zip.py tamper <zip> <out>       copies the zip entry by entry, with one byte of
                                            manifest.json changed (a letter of the package name
                                            switches case); prints the old and new byte

Nothing is trusted from the server's side: this reads the bytes on disk.
"""
import hashlib
import json
import os
import sys
import zipfile

CHUNK = 1 << 20


def sha256_of_entry(archive, info):
    digest = hashlib.sha256()
    with archive.open(info) as stream:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
    return digest.hexdigest()


def sha256_of_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
    return digest.hexdigest()


def has_zip64_end_record(path):
    """The ZIP64 end of central directory locator sits right before the end record (22 bytes + comment)."""
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        stream.seek(max(0, size - 65536 - 22 - 20))
        tail = stream.read()
    return b"PK\x06\x07" in tail and b"PK\x06\x06" in tail


def inspect(path):
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        names = [info.filename for info in infos]
        entries = []
        for info in infos:
            entries.append({
                "name": info.filename,
                "size": info.file_size,
                "compressedSize": info.compress_size,
                "method": info.compress_type,
                "isDir": info.is_dir(),
                "sha256": sha256_of_entry(archive, info),
                "dateTime": list(info.date_time),
            })
        manifest = None
        if "manifest.json" in names:
            manifest = json.loads(archive.read("manifest.json").decode("utf-8"))
        bad = archive.testzip()
    print(json.dumps({
        "entries": entries,
        "duplicates": sorted({name for name in names if names.count(name) > 1}),
        "manifest": manifest,
        "testzip": bad,
        "zip64": has_zip64_end_record(path),
        "fileSHA256": sha256_of_file(path),
        "fileSize": os.path.getsize(path),
    }))


def tamper(path, out):
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        changed = None
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "manifest.json":
                buffer = bytearray(data)
                start = buffer.index(b'"packageName"')
                index = start + len(b'"packageName"')
                while not (chr(buffer[index]).isalpha()):
                    index += 1
                before = buffer[index]
                buffer[index] = before ^ 0x20  # one letter changes case: still valid JSON, one byte different
                changed = {"offset": index, "before": chr(before), "after": chr(buffer[index])}
                data = bytes(buffer)
            target.writestr(info, data)
    print(json.dumps({"changed": changed}))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "inspect":
        inspect(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "tamper":
        tamper(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
