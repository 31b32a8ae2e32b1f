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

# The server writes the first admin's one-time password to a file only its user can read (not to its log). The person
# who ran this script is that user: show them the login once the server has written it (the file goes at that
# admin's first sign-in, so later starts show nothing).
data="${TRAIL_DATA:-$PWD/data}"
previous=""
for argument in "$@"; do
  case "$argument" in
    --data=*) data="${argument#--data=}" ;;
  esac
  if [ "$previous" = "--data" ]; then data="$argument"; fi
  previous="$argument"
done
password_file="$data/first-admin-password"
(
  for _ in $(seq 1 600); do
    if [ -s "$password_file" ]; then
      sleep 1   # after the server's own start lines
      printf '\n  Sign in as the first administrator (one-time password, from %s):\n' "$password_file"
      sed 's/^/    /' "$password_file"
      # Admins must use two-step sign-in (--require-two-step admins, the default): the first sign-in sets it up.
      printf '  The first sign-in also sets up two-step sign-in: have an authenticator app on your phone ready.\n'
      printf '\n'
      exit 0
    fi
    sleep 0.2
  done
) &

exec ".build/$configuration/trail-companion" serve --root "$PWD" --demo "$@"
