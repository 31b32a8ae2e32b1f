#!/usr/bin/env python3
"""Starts a real S3-compatible server on free loopback ports for the tests, creates a bucket, and prints one JSON line
{"endpoint", "pid", "accessKey", "secretKey", "bucket"} once it answers. The caller stops it by killing the process
group. This script stays as a guard: on SIGTERM, or when the test process that started it dies, it kills the
server's process group, so a run leaves no server behind.

    object_store.py seaweedfs FOLDER BUCKET      SeaweedFS (`weed server -s3`), with one identity: wrong keys are refused
    object_store.py moto FOLDER BUCKET           moto's S3 server, a second, independent implementation
"""
import json, os, signal, socket, subprocess, sys, time, urllib.request, urllib.error

ACCESS_KEY, SECRET_KEY = "trailtestkey", "trailtestsecret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url):
    try:
        urllib.request.urlopen(url, timeout=1)
        return True
    except urllib.error.HTTPError:
        return True  # 403 without credentials: it is up
    except Exception:
        return False


def tail(path, lines=15):
    with open(path, "rb") as f:
        return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def launch(kind, folder, log, attempt):
    """Starts the server on fresh free ports (and, for SeaweedFS, a fresh data folder); returns (S3 port, process)."""
    port = free_port()
    if kind == "seaweedfs":
        config = os.path.join(folder, "s3.json")
        with open(config, "w") as f:
            json.dump({"identities": [{"name": "trail", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                                       "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
                                      # Phones and the CDN read the bucket without keys, as from a public-read bucket.
                                      {"name": "anonymous", "actions": ["Read"]}]}, f)
        data = os.path.join(folder, "data" if attempt == 0 else f"data-{attempt}")
        os.makedirs(data, exist_ok=True)
        p = {name: free_port() for name in ["master", "volume", "filer", "mg", "vg", "fg", "sg"]}
        command = ["weed", "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                   f"-master.port={p['master']}", f"-master.port.grpc={p['mg']}", f"-volume.port={p['volume']}",
                   f"-volume.port.grpc={p['vg']}", f"-filer.port={p['filer']}", f"-filer.port.grpc={p['fg']}",
                   "-s3", f"-s3.port={port}", f"-s3.port.grpc={p['sg']}", f"-s3.config={config}",
                   "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.volumeSizeLimitMB=256",
                   # 256 MiB volumes: OBJECT_STORE_VOLUMES of them (40, 10 GiB, unless a benchmark needs more).
                   f"-volume.max={os.environ.get('OBJECT_STORE_VOLUMES', '40')}", "-metricsPort=0"]
    elif kind == "moto":
        command = ["moto_server", "-H", "127.0.0.1", "-p", str(port)]
    else:
        sys.exit(f"unknown object store {kind}")
    process = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    return port, process


def main():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # Foundation's Process may start us with it blocked
    parent = os.getppid()
    kind, folder, bucket = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(folder, exist_ok=True)
    log = open(os.path.join(folder, f"{kind}.log"), "ab")
    # Ports are picked free and then handed to the server, so another test's server can take one in between: a server
    # that exits before it answers is started again on fresh ports (three tries), and its log's tail is reported.
    for attempt in range(3):
        port, process = launch(kind, folder, log, attempt)
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while not answers(endpoint + "/"):
            if process.poll() is not None or time.time() > deadline:
                break
            time.sleep(0.2)
        else:
            break
        kill_group(process)
        if attempt == 2 or time.time() > deadline:
            log.flush()
            sys.exit(f"{kind} did not start; see {log.name}:\n{tail(log.name)}")
    env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_DEFAULT_REGION="us-east-1")
    # The filer may need a moment after the S3 port opens before a bucket can be made: retry until it can.
    while True:
        made = subprocess.run(["aws", "--endpoint-url", endpoint, "s3api", "create-bucket", "--bucket", bucket],
                              env=env, capture_output=True, text=True)
        if made.returncode == 0 or "BucketAlreadyOwnedByYou" in made.stderr or "BucketAlreadyExists" in made.stderr:
            break
        if time.time() > deadline:
            process.kill()
            sys.exit(f"could not create bucket {bucket}: {made.stderr}")
        time.sleep(0.3)
    if kind == "moto":
        # Public read, as a bucket behind a CDN is (SeaweedFS gets the same from its "anonymous" identity).
        policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                                     "Resource": f"arn:aws:s3:::{bucket}/*"}]})
        subprocess.run(["aws", "--endpoint-url", endpoint, "s3api", "put-bucket-policy", "--bucket", bucket, "--policy", policy],
                       env=env, check=True, capture_output=True)
    print(json.dumps({"endpoint": endpoint, "pid": process.pid, "accessKey": ACCESS_KEY, "secretKey": SECRET_KEY, "bucket": bucket}), flush=True)

    def stop(*_):
        try:
            os.killpg(process.pid, signal.SIGCONT)  # a paused server cannot die of SIGTERM
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    while process.poll() is None:
        if os.getppid() != parent:
            stop()
        time.sleep(0.2)


if __name__ == "__main__":
    main()
