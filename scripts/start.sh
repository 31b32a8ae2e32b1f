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
      printf '\n'
      exit 0
    fi
    sleep 0.2
  done
) &

exec ".build/$configuration/trail-companion" serve --root "$PWD" --demo "$@"
