#!/usr/bin/env bash
# Refreshes the README's pictures in docs/screenshots/ (the test run writes its own under .build/screenshots/).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product trail-companion
# The Python test tools of scripts/test.sh (installed into .venv by scripts/install-deps.sh --test).
[[ -x .venv/bin/python3 ]] && export PATH="$PWD/.venv/bin:$PATH"
TRAIL_SCREENSHOTS="$PWD/docs/screenshots" python3 -m pytest -q Tests/e2e/test_screenshots.py Tests/e2e/test_visitor_player.py Tests/e2e/test_two_step.py
