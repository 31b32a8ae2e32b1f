#!/usr/bin/env python3
"""A resumable upload through tuspy with the connection cut midway (run by TusTests.swift).

1. tuspy creates the upload and sends the first chunks;
2. a raw socket sends a PATCH whose Content-Length promises the rest of the file, sends only part of it, and
   closes the connection (a dropped connection);
3. the server's offset (HEAD) shows what it kept; a new tuspy Uploader on the same URL resumes from there,
   with tus checksums on.

The last line of the output is JSON: the URL, the offsets along the way, the final answer's headers and the
file's SHA-256.
"""
import argparse
import hashlib
import json
import socket
import sys
import time
from urllib.parse import urlsplit

import requests
from tusclient import client as tus_client
from tusclient.uploader import Uploader


def head_offset(url, headers):
    response = requests.head(url, headers={**headers, "Tus-Resumable": "1.0.0"}, timeout=10)
    return response.status_code, int(response.headers.get("Upload-Offset", "-1")), response.headers.get("Cache-Control")


def cut_patch(url, token, offset, data, send):
    """PATCH promising len(data) bytes, sending `send` of them, then closing the socket."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    head = (
        f"PATCH {parts.path} HTTP/1.1\r\n"
        f"Host: {parts.hostname}:{parts.port}\r\n"
        f"Authorization: Bearer {token}\r\n"
        "Tus-Resumable: 1.0.0\r\n"
        "Content-Type: application/offset+octet-stream\r\n"
        f"Upload-Offset: {offset}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "\r\n"
    )
    sock.sendall(head.encode())
    sent = 0
    while sent < send:
        step = min(64 * 1024, send - sent)
        sock.sendall(data[sent:sent + step])
        sent += step
    time.sleep(0.3)  # let the bytes reach the server before the connection drops
    sock.close()
    return sent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--tour", required=True)
    parser.add_argument("--waypoint", required=True)
    parser.add_argument("--chunk-size", type=int, default=1024 * 1024)
    parser.add_argument("--chunks-before-cut", type=int, default=2)
    parser.add_argument("--cut-bytes", type=int, default=1_500_001)
    args = parser.parse_args()

    auth = {"Authorization": f"Bearer {args.token}"}
    with open(args.file, "rb") as f:
        content = f.read()
    result = {"sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}

    client = tus_client.TusClient(args.endpoint, headers=auth)
    metadata = {"tour": args.tour, "waypoint": args.waypoint, "filename": "trail video.png"}
    first = client.uploader(file_path=args.file, chunk_size=args.chunk_size, metadata=metadata, retries=0)
    for _ in range(args.chunks_before_cut):
        first.upload_chunk()
    result["url"] = first.url
    result["beforeCut"] = first.offset

    result["cutSent"] = cut_patch(first.url, args.token, first.offset, content[first.offset:], args.cut_bytes)

    # The server notices the dropped connection and records what it kept; wait for the offset to move.
    deadline = time.time() + 20
    status, offset, cache = head_offset(first.url, auth)
    while offset == first.offset and time.time() < deadline:
        time.sleep(0.1)
        status, offset, cache = head_offset(first.url, auth)
    result["afterCut"] = offset
    result["headStatus"] = status
    result["headCacheControl"] = cache

    resumed = Uploader(file_path=args.file, url=first.url, client=client, chunk_size=args.chunk_size,
                       upload_checksum=True, retries=0)
    result["resumedFrom"] = resumed.offset
    resumed.upload()
    result["finalOffset"] = resumed.offset
    result["finalHeaders"] = dict(resumed.request.response_headers)
    result["statusAfter"] = head_offset(first.url, auth)[0]
    print(json.dumps(result))


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # the Swift test prints stderr and this line
        print(json.dumps({"error": repr(error)}))
        raise
