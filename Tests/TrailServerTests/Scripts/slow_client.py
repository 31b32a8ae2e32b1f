"""Clients that are slow on purpose, for the HTTP/1 idle time-out.

  slow_client.py idle PORT                 connects and sends nothing; prints {"closedAfter": seconds} once the server
                                           closes the connection (or {"closedAfter": null} after 30 s)
  slow_client.py patch PORT PATH TOKEN TOTAL CHUNK INTERVAL
                                           a tus PATCH of TOTAL bytes sent CHUNK bytes every INTERVAL seconds; prints
                                           {"status": <HTTP status or 0>, "seconds": <duration>}
  slow_client.py download PORT PATH CHUNK INTERVAL
                                           a GET read CHUNK bytes every INTERVAL seconds through a 64 KiB receive
                                           buffer; prints {"status", "bytes", "sha256", "seconds"}
  slow_client.py poll PORT PATH COUNT INTERVAL
                                           COUNT GETs of PATH on one connection, one every INTERVAL seconds; prints
                                           {"statuses": [...], "gaps": [...], "seconds"} (a status of 0: the
                                           connection was closed; a gap: seconds since the previous answer, or the
                                           connection, when the request was sent)
  slow_client.py flood PORT PATH COUNT PAUSE READ
                                           COUNT GETs of PATH sent on one connection (from a thread) while nothing is
                                           read for PAUSE seconds, then the first READ answers read and the connection
                                           closed; prints {"answers", "allOK"}
  slow_client.py pipeline PORT PATH...     every GET in one write on one connection (HTTP/1.1 pipelining), then reads
                                           the answers in turn; prints [{"status", "body"}, ...]
  slow_client.py stall PORT PATH SECONDS [GO]
                                           a GET read by nobody for SECONDS (or until the file GO exists) through a
                                           64 KiB receive buffer, then read to the end; prints {"status", "length",
                                           "bytes", "cut"} (cut: the connection ended before Content-Length bytes came)
  slow_client.py hold PORT PATH CLIENTS BYTES SECONDS [WAIT]
                                           CLIENTS connections each send about BYTES of pipelined GETs of PATH and read
                                           nothing for SECONDS, while /healthz is asked on a new connection every 0.5 s
                                           (3 s allowed each); then up to WAIT seconds more (default 0) until the server
                                           has closed them all; then they close and /healthz is asked for 3 s more;
                                           prints {"during": [seconds or null], "after": [...], "sent": [bytes each],
                                           "closedByServer": connections the server had closed when they left}
"""
import hashlib
import json
import socket
import sys
import time

mode, port = sys.argv[1], int(sys.argv[2])
if mode in ("download", "flood", "stall"):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # before connect: the window stays small
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
else:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
started = time.monotonic()


def read_head(stream):
    """An answer's status line and headers: (status, headers by lower-case name); (0, {}) when the connection ended."""
    status_line = stream.readline()
    if not status_line:
        return 0, {}
    status = int(status_line.split(b" ")[1])
    headers = {}
    while True:
        line = stream.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def read_answer(stream):
    """One HTTP/1.1 answer with a Content-Length body: (status, headers, body)."""
    status, headers = read_head(stream)
    if status == 0:
        return 0, {}, b""
    length = int(headers.get("content-length", "0"))
    return status, headers, stream.read(length) if status != 304 else b""


if mode == "download":
    path, chunk, interval = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    stream = sock.makefile("rb")
    status, headers, digest, received = 0, {}, hashlib.sha256(), 0
    try:
        status, headers = read_head(stream)
        length = int(headers.get("content-length", "0"))
        while received < length:
            piece = stream.read1(min(chunk, length - received))
            if not piece:
                break
            digest.update(piece)
            received += len(piece)
            time.sleep(interval)
    except OSError:
        pass
    print(json.dumps({"status": status, "bytes": received, "sha256": digest.hexdigest(), "seconds": time.monotonic() - started}))
elif mode == "flood":
    import threading
    path, count, pause, wanted = sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    sock.settimeout(60)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()

    def send_all():
        try:
            sock.sendall(request * count)
        except OSError:
            pass  # closed by us below, while the server was not reading

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    time.sleep(pause)
    stream = sock.makefile("rb")
    answers, all_ok = 0, True
    for _ in range(wanted):
        status, _, body = read_answer(stream)
        if status == 0:
            break
        answers += 1
        all_ok = all_ok and status == 200 and body.startswith(b"[")
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    print(json.dumps({"answers": answers, "allOK": all_ok}))
elif mode == "poll":
    path, count, interval = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    stream = sock.makefile("rb")
    statuses, gaps, last = [], [], started
    for _ in range(count):
        time.sleep(interval)
        gaps.append(time.monotonic() - last)
        try:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            status, _, _ = read_answer(stream)
        except OSError:
            status = 0
        last = time.monotonic()
        statuses.append(status)
    print(json.dumps({"statuses": statuses, "gaps": gaps, "seconds": time.monotonic() - started}))
elif mode == "pipeline":
    paths = sys.argv[3:]
    sock.sendall(b"".join(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() for path in paths))
    stream = sock.makefile("rb")
    answers = []
    for _ in paths:
        status, headers, body = read_answer(stream)
        answers.append({"status": status, "body": body.decode("utf-8", "replace")})
    print(json.dumps(answers))
elif mode == "stall":
    import os
    path, seconds = sys.argv[3], float(sys.argv[4])
    go = sys.argv[5] if len(sys.argv) > 5 else None
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    until = time.monotonic() + seconds
    while time.monotonic() < until and not (go and os.path.exists(go)):
        time.sleep(0.05)
    stream = sock.makefile("rb")
    status, length, received = 0, 0, 0
    try:
        status, headers = read_head(stream)
        length = int(headers.get("content-length", "0"))
        while received < length:
            piece = stream.read1(1 << 20)
            if not piece:
                break
            received += len(piece)
    except OSError:
        pass
    print(json.dumps({"status": status, "length": length, "bytes": received, "cut": received < length}))
elif mode == "hold":
    import threading
    path, clients, size, seconds = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    wait = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    sock.close()
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    burst = request * max(1, size // len(request))
    peers, sent = [], [0] * clients

    def flood(index, peer):
        try:
            view = memoryview(burst)
            while view:
                count = peer.send(view)
                sent[index] += count
                view = view[count:]
        except OSError:
            pass  # closed by the server (its write time-out) or by us

    for index in range(clients):
        peer = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        peer.connect(("127.0.0.1", port))
        peers.append(peer)
        threading.Thread(target=flood, args=(index, peer), daemon=True).start()

    def health():
        began = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as probe:
                probe.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
                status, _, body = read_answer(probe.makefile("rb"))
                return time.monotonic() - began if status == 200 and body == b"ok" else None
        except OSError:
            return None

    def closed(peer):
        """Whether the server closed it: what it sent before is still here to read, then the end or a reset."""
        peer.setblocking(False)
        try:
            while True:
                if peer.recv(1 << 20) == b"":
                    return True
        except BlockingIOError:
            return False  # still open: nothing more to read now
        except OSError:
            return True

    during, after, gone = [], [], set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        during.append(health())
        time.sleep(0.5)
    end = time.monotonic() + wait
    while True:
        gone.update(index for index, peer in enumerate(peers) if index not in gone and closed(peer))
        if len(gone) == len(peers) or time.monotonic() >= end:
            break
        time.sleep(0.2)
    closed_by_server = len(gone)
    for peer in peers:
        peer.close()
    end = time.monotonic() + 3
    while time.monotonic() < end:
        after.append(health())
        time.sleep(0.5)
    print(json.dumps({"during": during, "after": after, "sent": sent, "closedByServer": closed_by_server}))
elif mode == "idle":
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
