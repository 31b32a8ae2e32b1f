"""Clients that are slow on purpose, for the HTTP/1 idle time-out.

  slow_client.py idle PORT                 connects and sends nothing; prints {"closedAfter": seconds} once the server
                                           closes the connection (or {"closedAfter": null} after 30 s)
  slow_client.py patch PORT PATH TOKEN TOTAL CHUNK INTERVAL
                                           a tus PATCH of TOTAL bytes sent CHUNK bytes every INTERVAL seconds; prints
                                           {"status": <HTTP status or 0>, "seconds": <duration>}
"""
import json
import socket
import sys
import time

mode, port = sys.argv[1], int(sys.argv[2])
sock = socket.create_connection(("127.0.0.1", port), timeout=30)
started = time.monotonic()
if mode == "idle":
    try:
        data = sock.recv(1)
        closed = time.monotonic() - started if data == b"" else None
    except socket.timeout:
        closed = None
    print(json.dumps({"closedAfter": closed}))
else:
    path, token, total, chunk, interval = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
    sock.sendall((f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nTus-Resumable: 1.0.0\r\n"
                  f"Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: {total}\r\n\r\n").encode())
    sent, status = 0, 0
    try:
        while sent < total:
            time.sleep(interval)
            piece = min(chunk, total - sent)
            sock.sendall(b"x" * piece)
            sent += piece
        answer = sock.recv(4096)
        status = int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    except OSError:
        status = 0
    print(json.dumps({"status": status, "seconds": time.monotonic() - started}))
