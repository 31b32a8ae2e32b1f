#!/usr/bin/env bash
# Every test: Swift unit and HTTP tests (real SQLite, real libclamav, real zips), then the browser suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
# The Python test tools (pytest, selenium, schemathesis, moto, SeaweedFS, awscli, …) live in .venv.
export PATH="$PWD/.venv/bin:$PATH"
export TRAIL_SLOW_TESTS="${TRAIL_SLOW_TESTS:-1}"
# Each phase's wall time, printed as it ends: BENCHMARKS.md's test-loop row is read from these lines.
last=0
phase() { echo "test.sh: $1 took $((SECONDS - last)) s (at $SECONDS s)"; last=$SECONDS; }
phase "installs"
# The house style first: seconds, and a difference is a failure (scripts/format.sh rewrites the files).
scripts/format.sh --check
# The house idioms (handlers registered with `use:`, ids that exist, …): counts that may only go down.
scripts/check-idioms.sh
# The web player's pure modules (trust rules, offline store, state machine, alerts) under Node's own test runner: no npm.
node --test Tests/js/
phase "format, idioms, JS tests"
# The build's log, for scripts/check-warnings.sh: the project's own code compiles without a warning.
mkdir -p .build
swift build --build-tests 2>&1 | tee .build/build-with-tests.log
phase "build with tests"
scripts/check-warnings.sh .build/build-with-tests.log
# Every package at the version dependencies.lock names (Package.swift pins the direct ones exactly).
scripts/check-lock.sh
# Under a watchdog: a stuck test fails the run with the stuck tests named and the stacks printed, instead of hanging.
# First every suite in parallel but the two that write 4 GiB and more; then the calm tests; then those two alone.
# Beside other suites their disk traffic stalled live test servers for tens of seconds.
# The tests of time-outs and pacing run in the second phase too: they need a server that keeps to a short idle or write
# time-out while a client is slow or stalls on purpose, and a connection's requests answered at the pace of a server
# that is not shared with five hundred other tests; the parallel phase's crowding of the two cores allows neither.
# The big-imports test is here too: its four imports of 19 MiB at once would crowd the parallel phase further.
calm="theLiveTestClientReconnects|idleConnectionsCloseMovingUploadsDoNot|answersRespectBackPressure|unreadDownloadIsCut"
calm+="|peersThatNeverReadCannotStallTheServer|stopDoesNotWaitForAStalledPeer|bigImportsLeaveTheServerAnswering"
TRAIL_SLOW_TESTS=0 scripts/swift-test-watchdog.sh --skip "$calm"
phase "Swift tests, parallel"
scripts/swift-test-watchdog.sh --filter "$calm"
phase "Swift tests, calm"
# The packages of 4 GiB and more after the calm tests, not beside them: their writes and hashing take both cores and
# the disk, and the calm tests ask a live server for prompt answers.
if [[ "$TRAIL_SLOW_TESTS" == 1 ]]; then
  scripts/swift-test-watchdog.sh --filter "LargePackageTests"
  phase "Swift tests, large packages"
fi
# The library products' public API against the last release's committed API dumps (Tests/api-baseline).
scripts/check-api.sh
phase "API check"
if compgen -G "Tests/e2e/test_*.py" >/dev/null; then
  swift build --product trail-companion
  # faulthandler_timeout (pytest.ini) prints every thread's stack of a test that runs too long; this ends a stuck run.
  # Two workers (pytest-xdist), each with its own server and browsers, a whole file at a time: the suite waits on
  # browsers and servers as much as it computes, so two share two cores well (BENCHMARKS.md, "The test loop").
  timeout --kill-after=30 "${TRAIL_E2E_LIMIT_SECONDS:-2400}" \
    python3 -m pytest -q -n "${TRAIL_E2E_WORKERS:-2}" --dist loadfile Tests/e2e
  phase "browser suite"
fi
