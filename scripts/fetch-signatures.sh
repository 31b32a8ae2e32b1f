#!/usr/bin/env bash
# ClamAV signatures for a first start: without them every upload stays "pending" and no tour can be published.
# Installs clamav-freshclam and runs one update, bounded to about two minutes. If the signature mirror cannot be
# reached, says so and what to do; the server picks up signatures that arrive later by itself (no restart).
#
#   scripts/fetch-signatures.sh        the folder is TRAIL_CLAMAV_DB's first entry, default /var/lib/clamav
set -uo pipefail
folder="${TRAIL_CLAMAV_DB:-/var/lib/clamav}"; folder="${folder%%:*}"
has_signatures() { compgen -G "$folder/*.cvd" >/dev/null || compgen -G "$folder/*.cld" >/dev/null; }
if has_signatures; then
  echo "ClamAV signatures: found in $folder."
  exit 0
fi
sudo=""; [[ "$(id -u)" == 0 ]] || sudo="sudo"
if ! command -v freshclam >/dev/null; then
  echo "Installing clamav-freshclam (ClamAV's signature updater) ..."
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clamav-freshclam >/dev/null
fi
if command -v systemctl >/dev/null && systemctl is-active --quiet clamav-freshclam 2>/dev/null; then
  # The updater service already runs (it starts at install on a systemd machine): wait for its first download.
  echo "Waiting up to 2 minutes for the clamav-freshclam service's first download ..."
  for _ in $(seq 1 120); do has_signatures && break; sleep 1; done
else
  echo "Downloading ClamAV signatures (up to 2 minutes) ..."
  $sudo mkdir -p "$folder"
  $sudo timeout 120 freshclam --quiet --datadir="$folder" 2>&1 | tail -3
fi
if has_signatures; then
  echo "ClamAV signatures: downloaded to $folder."
  exit 0
fi
cat <<MSG

  ClamAV's signature mirror could not be reached from this machine, so there are no malware signatures in
  $folder yet. The server starts anyway, but uploads stay "pending" (they are never marked clean without a
  scan). To fix it, give this machine access to database.clamav.net (or your organisation's ClamAV mirror)
  and run "sudo freshclam", or copy main.cvd, daily.cvd and bytecode.cvd from another machine into
  $folder. The running server notices new signatures within a minute and scans what is waiting; no restart.

MSG
exit 1
