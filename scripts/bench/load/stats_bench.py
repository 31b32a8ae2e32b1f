"""Visitor statistics under scripted visitors, for scripts/bench/bench-stats.sh (which starts the server and releases the
tour first). Python's standard library only.

1. Visits: each scripted visit opens the tour (from one of three signs, in one of two languages or none), maybe
   saves it, opens and plays some stops, maybe completes it, maybe sees an alert. An online visit posts each event as
   the player does (at once); an offline one (the `--offline` share) keeps them with their days and posts them in one
   batch at the end, as a phone back online does. Every phone has an address of its own (X-Forwarded-For). Then the
   management API's statistics are compared with what the script sent: totals per kind, per day, per sign and per
   language.
2. A batch of 50 events, posted one after the other from rotating addresses: p50 and p95 of the answer's time.
3. Load: events at `--rate` a second (batches of 50, paced, from rotating addresses) for `--seconds`, while the
   panel's pages (the site page and the statistics page) are timed; the same pages are timed before, alone.
"""
from __future__ import annotations

import argparse
import datetime
import http.client
import json
import random
import statistics
import threading
import time
from collections import Counter
from urllib.parse import urlparse

KINDS = ["opened", "saved-offline", "stop-opened", "stop-played", "completed", "alert-shown"]
WIRE = {"opened": "opened", "saved-offline": "savedOffline", "stop-opened": "stopOpened", "stop-played": "stopPlayed",
        "completed": "completed", "alert-shown": "alertShown"}


class Client:
    """One keep-alive connection."""

    def __init__(self, base: str):
        url = urlparse(base)
        self.host, self.port = url.hostname, url.port
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes, float]:
        started = time.perf_counter()
        for attempt in range(2):
            try:
                self.connection.request(method, path, body=body, headers=headers or {})
                response = self.connection.getresponse()
                data = response.read()
                return response.status, data, time.perf_counter() - started
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt:
                    raise
        raise RuntimeError("unreachable")

    def post_events(self, events: list[dict], address: str) -> tuple[int, dict, float]:
        status, data, seconds = self.request("POST", "/api/v1/events", json.dumps({"events": events}).encode(),
                                             {"Content-Type": "application/json", "X-Forwarded-For": address})
        return status, (json.loads(data) if data else {}), seconds


def address(n: int) -> str:
    """A distinct address per scripted phone (10.0.0.0/8)."""
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def visits(args, waypoints: list[int], languages: list[str]) -> tuple[list[str], bool]:
    rng = random.Random(20261128)
    today = datetime.datetime.now(datetime.timezone.utc).date()
    expected: Counter = Counter()
    by_day: Counter = Counter()
    by_source: Counter = Counter()
    by_language: Counter = Counter()
    client = Client(args.base)
    later: list[tuple[str, list[dict]]] = []
    refused = 0
    for n in range(args.visits):
        offline = rng.random() < args.offline
        # An offline phone sends days that have passed; an online one sends today (UTC's today: the run's zone).
        day = (today - datetime.timedelta(days=rng.randint(1, 20) if offline else 0)).isoformat()
        source = rng.choice(["north-gate", "lake-sign", "visitor-centre", None])
        language = rng.choice(languages + [None]) if languages else None

        def event(kind: str, waypoint: int | None = None) -> dict:
            e = {"type": kind, "packageId": args.package, "version": args.version, "day": day}
            if waypoint is not None:
                e["waypointId"] = waypoint
            if language:
                e["language"] = language
            if source:
                e["source"] = source
            return e

        sent = [event("opened")]
        if rng.random() < 0.6:
            sent.append(event("saved-offline"))
        opened = [w for w in waypoints if rng.random() < 0.7]
        for w in opened:
            sent.append(event("stop-opened", w))
            if rng.random() < 0.5:
                sent.append(event("stop-played", w))
        if len(opened) == len(waypoints):
            sent.append(event("completed"))
        if rng.random() < 0.1:
            sent.append(event("alert-shown"))
        for e in sent:
            expected[e["type"]] += 1
            by_day[(e["day"], e["type"])] += 1
            by_source[(e.get("source", ""), e["type"])] += 1
            by_language[(e.get("language", ""), e["type"])] += 1
        if offline:
            later.append((address(n), sent))
        else:
            for e in sent:
                status, _, _ = client.post_events([e], address(n))
                refused += status != 202
    for phone, sent in later:
        status, _, _ = client.post_events(sent, phone)
        refused += status != 202
    start = (today - datetime.timedelta(days=29)).isoformat()
    status, data, _ = client.request("GET", f"/api/v1/manage/sites/{args.site}/stats?from={start}&to={today.isoformat()}",
                                     headers={"Authorization": f"Bearer {args.token}"})
    assert status == 200, data
    stats = json.loads(data)
    lines = []
    worst = 0.0
    exact = True

    def compare(label: str, shown, wanted: int):
        nonlocal worst, exact
        if wanted < 10:
            ok = shown == "<10"
            exact &= ok
            if not ok:
                worst = max(worst, 1.0)
            return
        got = shown if isinstance(shown, int) else -1
        error = abs(got - wanted) / wanted
        worst = max(worst, error)
        exact &= got == wanted
        if got != wanted:
            lines.append(f"  {label}: {got} shown, {wanted} sent")

    for kind in KINDS:
        compare(f"total {kind}", stats["totals"][WIRE[kind]], expected[kind])
    for row in stats["days"]:
        for kind in KINDS:
            compare(f"{row['day']} {kind}", row["counts"][WIRE[kind]], by_day[(row["day"], kind)])
    for row in stats["sources"]:
        for kind in KINDS:
            compare(f"sign {row['key'] or '(none)'} {kind}", row["counts"][WIRE[kind]], by_source[(row["key"], kind)])
    for row in stats["languages"]:
        for kind in KINDS:
            compare(f"language {row['key'] or '(none)'} {kind}", row["counts"][WIRE[kind]], by_language[(row["key"], kind)])
    total = sum(expected.values())
    print(f"visits: {args.visits} ({len(later)} offline, sent later), {total} events sent, {refused} posts refused")
    print("  totals sent:  " + ", ".join(f"{k} {expected[k]}" for k in KINDS))
    print("  totals shown: " + ", ".join(f"{k} {stats['totals'][WIRE[k]]}" for k in KINDS))
    print(*lines, sep="\n") if lines else print("  every total, day, sign and language matches the script exactly")
    return [f"{args.visits} scripted visits, {len(later)} offline and sent later ({total} events): largest difference "
            f"of the statistics from the script {worst * 100:.2f} %", "the script's own totals", "exact" if exact else f"{worst * 100:.2f} %",
            "±1 %", "met" if worst <= 0.01 else "not met"], exact


def batch_latency(args) -> list[str]:
    client = Client(args.base)
    times = []
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    batch = [{"type": "opened", "packageId": args.package, "version": args.version, "day": today, "source": "bench"}] * 50
    for n in range(args.batches):
        status, answer, seconds = client.post_events(batch, address(100_000 + n // 30))
        assert status == 202 and answer.get("dropped") == 0, (status, answer)
        times.append(seconds)
    p50, p95 = percentile(times, 50) * 1000, percentile(times, 95) * 1000
    print(f"batch of 50: {args.batches} posts, p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    return [f"POST /api/v1/events, a batch of 50, {args.batches} posts one after another: p50 {p50:.2f} ms, p95 {p95:.2f} ms",
            "none", "—", "p95 < 5 ms", "met" if p95 < 5 else "not met"]


def panel_times(args, seconds: float) -> list[float]:
    client = Client(args.base)
    headers = {"Authorization": f"Bearer {args.token}"}
    times = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in (f"/sites/{args.site}", f"/sites/{args.site}/stats", f"/tours/{args.tour}"):
            status, _, elapsed = client.request("GET", path, headers=headers)
            assert status == 200, (path, status)
            times.append(elapsed)
        time.sleep(0.05)
    return times


def load(args) -> list[list[str]]:
    before = panel_times(args, args.seconds / 2)
    stop = threading.Event()
    sent = Counter()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    batch = [{"type": "stop-opened", "packageId": args.package, "version": args.version, "day": today,
              "waypointId": args.waypoints[0]}] * 50
    posts_per_second = args.rate / 50

    def sender(offset: int, workers: int):
        client = Client(args.base)
        n = offset
        started = time.monotonic()
        while not stop.is_set():
            status, answer, _ = client.post_events(batch, address(200_000 + n // 30))
            sent["posts"] += 1
            sent["counted"] += answer.get("counted", 0) if status == 202 else 0
            sent["refused"] += status != 202
            n += workers
            # Paced: the workers' posts interleave, the k-th post of all of them due k / posts_per_second after the start.
            due = started + (n - offset) / posts_per_second
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    workers = 4
    threads = [threading.Thread(target=sender, args=(i, workers), daemon=True) for i in range(workers)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    during = panel_times(args, args.seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - began
    rate = sent["counted"] / elapsed
    b50, b95 = percentile(before, 50) * 1000, percentile(before, 95) * 1000
    d50, d95 = percentile(during, 50) * 1000, percentile(during, 95) * 1000
    slower = d95 / b95 - 1
    print(f"load: {sent['counted']} events counted in {elapsed:.1f} s = {rate:.0f} events/s ({sent['refused']} posts refused)")
    print(f"panel pages alone: p50 {b50:.1f} ms, p95 {b95:.1f} ms ({len(before)} requests); during the load: p50 {d50:.1f} ms, "
          f"p95 {d95:.1f} ms ({len(during)} requests): {slower * 100:+.1f} % at p95")
    return [
        [f"POST /api/v1/events under load, batches of 50 paced at {args.rate} events/s for {args.seconds:.0f} s: {rate:.0f} events/s counted, "
         f"{sent['refused']} posts refused", f"the pace asked, {args.rate} events/s", f"{rate / args.rate:.2f}", "2,000 events/s",
         "met" if rate >= 2000 * 0.98 and sent["refused"] == 0 else "not met"],
        [f"the panel's pages (site, statistics, tour page) during that load: p95 {d95:.1f} ms", f"the same pages alone, before: p95 {b95:.1f} ms",
         f"{d95 / b95:.2f} × time", "at most 10 % slower", "met" if slower <= 0.10 else "not met"],
    ]


def main():
    parser = argparse.ArgumentParser()
    for name in ("base", "token", "site", "package"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--tour", type=int, required=True)
    parser.add_argument("--version", type=int, required=True)
    parser.add_argument("--visits", type=int, default=1000)
    parser.add_argument("--offline", type=float, default=0.3)
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--results", required=True)
    args = parser.parse_args()
    client = Client(args.base)
    status, data, _ = client.request("GET", f"/api/v1/packages/{args.package}")
    assert status == 200, data
    manifest = json.loads(data)["manifest"]
    args.waypoints = [w["id"] for w in manifest["waypoints"]]
    rows = []
    row, _ = visits(args, args.waypoints, manifest.get("languages") or [])
    rows.append(row)
    rows.append(batch_latency(args))
    rows.extend(load(args))
    with open(args.results, "w") as out:
        for row in rows:
            out.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
