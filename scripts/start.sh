#!/usr/bin/env bash
# One command from a fresh clone to a running server: installs what is missing, builds while the malware signatures
# download, migrates, adds the demo site and tour, and prints the URL and (on first start) where the admin's one-time
# password is. Extra arguments go to `trail-companion serve` (e.g. --port 9000, --tile-url ...).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
scripts/install-deps.sh
# The signature download waits on a remote mirror and the build on the CPU: run them side by side. Neither blocks the
# start: the server scans waiting uploads once signatures arrive, and the script explains what to do if they never do.
mkdir -p .build
signatures_log=.build/fetch-signatures.log
scripts/fetch-signatures.sh >"$signatures_log" 2>&1 &
signatures=$!
configuration="${TRAIL_BUILD:-debug}"
swift build -c "$configuration" --product trail-companion
if kill -0 "$signatures" 2>/dev/null; then
  echo "ClamAV signatures are still downloading in the background (progress in $signatures_log); uploads wait for them."
else
  wait "$signatures" || true
  cat "$signatures_log"
fi
echo "Built in $(( $(date +%s) - started )) s."
# The server adds the time to its "is running" line, so the whole first start is measured to the printed URL.
export TRAIL_START_CLOCK="$started"
exec ".build/$configuration/trail-companion" serve --root "$PWD" --demo "$@"
