#!/usr/bin/env python3
"""A TCP proxy on a free loopback port in front of TARGET_PORT, for the tests' network faults between the server and a
bucket (the bucket itself stays up, so the test can keep reading it directly):

    tcp_proxy.py TARGET_PORT [BYTES_PER_SECOND]

Prints the port it listens on. SIGUSR1 cuts every connection and refuses new ones (an outage); SIGUSR2 lets them
through again. With BYTES_PER_SECOND, traffic towards the target is throttled to about that rate (a slow uplink, so a
test can act in the middle of an upload). Ends when its parent does, or on SIGTERM.
"""
import os, select, signal, socket, sys, threading, time

target_port = int(sys.argv[1])
rate = int(sys.argv[2]) if len(sys.argv) > 2 else 0
blocked = threading.Event()
connections = set()
lock = threading.Lock()


def close_all():
    with lock:
        for c in list(connections):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        connections.clear()


def on_usr1(*_):
    blocked.set()
    threading.Thread(target=close_all, daemon=True).start()


signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGUSR2, lambda *_: blocked.clear())
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))


def pipe(client, upstream):
    try:
        while not blocked.is_set():
            readable, _, _ = select.select([client, upstream], [], [], 0.2)
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                if source is client and rate:
                    time.sleep(len(data) / rate)
                (upstream if source is client else client).sendall(data)
    except OSError:
        pass
    finally:
        for s in (client, upstream):
            with lock:
                connections.discard(s)
            try:
                s.close()
            except OSError:
                pass


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    while True:
        client, _ = listener.accept()
        if blocked.is_set():
            client.close()
            continue
        try:
            upstream = socket.create_connection(("127.0.0.1", target_port))
        except OSError:
            client.close()
            continue
        with lock:
            connections.update({client, upstream})
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2})
    main()
