"""Imports that start and stall, for the import slots.

  stalled_upload.py PORT TOKEN TOUR_ID CLIENTS GO_FILE

CLIENTS connections each send a dry-run import's request head, its multipart part head and the first 16 bytes of a
1 MiB CSV (one point and a long unused column) to /api/v1/manage/tours/TOUR_ID/import, and then nothing: a client on
a slow or stalled link. Once GO_FILE exists (the test creates it when it has checked what it needs while they
stall) each sends the rest of its file and reads the answer. Prints one JSON line: {"statuses": [status, ...]}.
"""
import json
import os
import socket
import sys
import threading
import time

port, token, tour_id, clients, go_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
boundary = "stalled-upload-boundary"
part = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"points.csv\"\r\n"
        "Content-Type: text/csv\r\n\r\n").encode()
start = b"latitude,longitude,name,notes\n44.4,-122.1,Stalled,"
content = start + b"x" * ((1 << 20) - len(start) - 1) + b"\n"
body = part + content + f"\r\n--{boundary}--\r\n".encode()
head = (f"POST /api/v1/manage/tours/{tour_id}/import?dryRun=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
sent = len(part) + 16

held = []
for _ in range(clients):
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    sock.sendall(head + body[:sent])
    held.append(sock)
# The test decides when the stall ends; two minutes at most, so a failed test never leaves this behind.
deadline = time.monotonic() + 120
while not os.path.exists(go_file) and time.monotonic() < deadline:
    time.sleep(0.02)

statuses = [None] * clients


def finish(index, sock):
    sock.sendall(body[sent:])
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    first = data.split(b"\r\n", 1)[0].split(b" ")
    statuses[index] = int(first[1]) if len(first) > 1 else 0


threads = [threading.Thread(target=finish, args=(index, sock)) for index, sock in enumerate(held)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"statuses": statuses}))
