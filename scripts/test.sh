#!/usr/bin/env bash
# Every test: Swift unit and HTTP tests (real SQLite, real libclamav, real zips), then the browser suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
# The Python test tools (pytest, selenium, schemathesis, moto, SeaweedFS, awscli, …) live in .venv.
export PATH="$PWD/.venv/bin:$PATH"
export TRAIL_SLOW_TESTS="${TRAIL_SLOW_TESTS:-1}"
swift build --build-tests
swift test --skip-build
if compgen -G "Tests/e2e/test_*.py" >/dev/null; then
  swift build --product trail-companion
  python3 -m pytest -q Tests/e2e
fi
