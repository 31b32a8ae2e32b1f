"""A phone's link in front of a server, for scripts/bench/bench-player.sh: one downstream rate that every connection
shares (server to browser, as on a mobile link) and a round-trip time (half of it added in each direction).
Everything the browser fetches goes through it, the service worker's fetches included, which a page's own network
throttling in Chromium does not reach.

  throttle_proxy.py TARGET_PORT BITS_PER_SECOND RTT_MS COUNT_FILE

Prints the port it listens on. Writes the downstream bytes so far to COUNT_FILE every 50 ms. While COUNT_FILE.down
exists the link is down, as in a phone's airplane mode: new connections are closed at once and open ones are cut.
Ends when its parent does, or on SIGTERM.
"""
import asyncio
import os
import signal
import sys

target_port, bits, rtt_ms, count_file = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
RATE = bits / 8  # bytes per second
DELAY = rtt_ms / 2000  # one way, seconds
CHUNK = 16384
DOWN = count_file + ".down"


class Link:
    """The shared bottleneck: a chunk leaves when the link is free, takes its size over the rate, and arrives one
    way's delay later."""

    def __init__(self):
        self.free_at = 0.0
        self.down = 0

    def arrival(self, size: int, now: float) -> float:
        start = max(now, self.free_at)
        self.free_at = start + size / RATE
        return self.free_at + DELAY


link = Link()


async def forward(reader, writer, downstream: bool):
    """Reads as fast as the sender gives (up to a bounded buffer, as a link's queue) and delivers each chunk at its
    arrival time, so the delay does not stall the rate."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue(maxsize=64)

    async def deliver():
        while True:
            at, data = await queue.get()
            if data is None:
                break
            wait = at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            if downstream:
                link.down += len(data)
            await writer.drain()
        writer.close()

    delivering = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data or os.path.exists(DOWN):
                break
            now = loop.time()
            await queue.put((link.arrival(len(data), now) if downstream else now + DELAY, data))
    except (ConnectionError, OSError):
        pass
    await queue.put((0, None))
    try:
        await delivering
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer):
    if os.path.exists(DOWN):
        client_writer.close()
        return
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(forward(client_reader, server_writer, False), forward(server_reader, client_writer, True))


async def report():
    while True:
        with open(count_file + ".part", "w") as out:
            out.write(str(link.down))
        os.replace(count_file + ".part", count_file)
        if os.getppid() == 1:
            os._exit(0)
        await asyncio.sleep(0.05)


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: os._exit(0))
    await asyncio.gather(server.serve_forever(), report())


asyncio.run(main())
