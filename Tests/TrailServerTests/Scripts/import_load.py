"""Big imports at once, for the import pool.

  import_load.py PORT TOKEN TOUR_ID MEGABYTES CLIENTS

Makes a CSV of about MEGABYTES (2,000 rows; a long unused "notes" column makes up the size, which the CSV reader
still has to read byte by byte). CLIENTS connections each send a dry-run import of it to
/api/v1/manage/tours/TOUR_ID/import at once, and /healthz is asked on a new connection every 0.05 s until every big
import has answered. Finally a small import is tried once more. Prints one JSON line:

  {"imports": [status, ...], "healthz": [seconds, ...],
   "healthzDuringParse": how many /healthz answers came while an import was still being read, "after": status}
"""
import json
import socket
import sys
import threading
import time

port, token, tour_id, megabytes, clients = (
    int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
path = f"/api/v1/manage/tours/{tour_id}/import?dryRun=true"
boundary = "import-load-boundary"


def csv_file(target_bytes):
    rows = 2000
    filler = "x" * max(1, int(target_bytes / rows) - 40)
    lines = ["latitude,longitude,name,notes"]
    for row in range(rows):
        lines.append(f"{44.3 + row * 0.00001:.5f},{-122.1 - row * 0.00001:.5f},Stop {row},{filler}")
    return ("\n".join(lines) + "\n").encode()


def body(data):
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"points.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode()


def request_head(length):
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n"
            "Connection: close\r\n\r\n").encode()


def read_answer(sock):
    """(status, headers by lower-case name, body) of one answer on a Connection: close socket."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines or len(lines[0].split(b" ")) < 2:
        return 0, {}, b""
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.decode().strip().lower()] = value.decode().strip()
    return int(lines[0].split(b" ")[1]), headers, rest


def small_import():
    payload = body(b"latitude,longitude,name\n44.4,-122.1,One\n")
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request_head(len(payload)) + payload)
        return read_answer(sock)


big = body(csv_file(megabytes * 1024 * 1024))
statuses = [None] * clients


def send(index):
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        sock.sendall(request_head(len(big)) + big)
        statuses[index] = read_answer(sock)[0]


threads = [threading.Thread(target=send, args=(index,)) for index in range(clients)]
for thread in threads:
    thread.start()
healthz = []
during = 0
while any(thread.is_alive() for thread in threads):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        status = read_answer(sock)[0]
    healthz.append(time.monotonic() - started if status == 200 else None)
    if any(thread.is_alive() for thread in threads):
        during += 1
    time.sleep(0.05)
for thread in threads:
    thread.join()

print(json.dumps({
    "imports": statuses, "healthz": healthz, "healthzDuringParse": during,
    "after": small_import()[0],
}))
