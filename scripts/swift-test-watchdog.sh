#!/usr/bin/env bash
# Runs `swift test --skip-build` under a watchdog. The whole suite takes about ten minutes on two cores; a run that
# goes on far longer is stuck, and a stuck run prints nothing at all. Past the limit this prints what is needed to
# find the cause (the tests that started and never ended, and every thread's stack of the test process), then stops
# the run and fails.
#
#   TRAIL_TEST_LIMIT_SECONDS   the limit (default 1800)
set -uo pipefail
cd "$(dirname "$0")/.."
limit="${TRAIL_TEST_LIMIT_SECONDS:-1800}"
log="$(mktemp -t swift-test-XXXXXX.log)"
trap 'rm -f "$log"' EXIT

# Line-buffered, so the lines of the tests that are stuck are not left in a buffer.
stdbuf -oL -eL swift test --skip-build "$@" > >(tee "$log") 2>&1 &
runner=$!
started=$SECONDS
while kill -0 "$runner" 2>/dev/null; do
  if (( SECONDS - started > limit )); then
    echo
    echo "== swift test still running after ${limit} s: stuck. Stacks of the test process:"
    for pid in $(pgrep -f 'PackageTests.xctest' || true); do
      if command -v gdb >/dev/null; then
        timeout 120 gdb -p "$pid" -batch -ex 'thread apply all bt 25' 2>/dev/null \
          | grep -E '^(Thread|#)' | grep -vE ' in (__GI_|__futex|futex_|___pthread_cond|__pthread_cond|epoll_wait|syscall) ' | cut -c1-220
      fi
    done
    echo "== tests that started and never ended:"
    python3 - "$log" <<'PY'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r'^\S+ Test (.+?) started\.$', line.rstrip())
    if m: started.append(m.group(1)); continue
    m = re.search(r'^\S+ Test (.+?) (?:with \d+ test cases? )?(?:passed|failed) after', line)
    if m: ended.add(m.group(1))
for name in started:
    if name != "run" and name not in ended: print("  " + name)
PY
    pkill -9 -f 'PackageTests.xctest' || true
    kill -9 "$runner" 2>/dev/null || true
    wait "$runner" 2>/dev/null
    exit 1
  fi
  sleep 5
done
wait "$runner"
status=$?
if (( status != 0 )); then
  # CI keeps only the tail of a long log; repeat what failed where it will be read.
  echo
  echo "== swift test failed (exit $status). The failed tests and their issues:"
  grep -E '^\S+ (Test .+ (recorded an issue|failed after)|Suite .+ failed after)' "$log" | cut -c1-600 | tail -60
fi
exit "$status"
