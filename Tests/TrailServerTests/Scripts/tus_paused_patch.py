"""A tus PATCH that stops half-way: sends the headers and the first `half` bytes of `file`, prints "sent", waits for
`go_file` to exist, then either sends the rest and prints the answer's status ("finish"), or closes the connection
("cut"). Prints one JSON line at the end: {"status": <HTTP status or 0>}.

usage: tus_paused_patch.py PORT PATH TOKEN FILE HALF finish|cut GO_FILE
"""
import json
import os
import socket
import sys
import time

port, path, token, file, half, mode, go_file = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
data = open(file, "rb").read()
sock = socket.create_connection(("127.0.0.1", int(port)), timeout=120)
head = (f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nTus-Resumable: 1.0.0\r\n"
        f"Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: {len(data)}\r\n\r\n")
sock.sendall(head.encode() + data[:half])
print("sent", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(go_file) and time.monotonic() < deadline:
    time.sleep(0.01)
status = 0
if mode == "finish":
    sock.sendall(data[half:])
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    status = int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else 0
sock.close()
print(json.dumps({"status": status}), flush=True)
