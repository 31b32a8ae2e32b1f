#!/usr/bin/env bash
# One command from a fresh clone to a running server: installs what is missing, fetches malware signatures once,
# builds, migrates, adds the demo site and tour, and prints the URL and (on first start) the admin's one-time password.
# Extra arguments go to `trail-companion serve` (e.g. --port 9000, --tile-url ...).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/fetch-signatures.sh || true   # never blocks the start: it explains what to do instead
configuration="${TRAIL_BUILD:-debug}"
swift build -c "$configuration" --product trail-companion
exec ".build/$configuration/trail-companion" serve --root "$PWD" --demo "$@"
