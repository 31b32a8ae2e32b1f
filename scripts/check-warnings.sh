#!/usr/bin/env bash
# No compiler warning from the project's own code: fails listing each `warning:` of a build log whose file lies under
# this checkout's Sources/, Tests/ or Fuzz/ (a dependency's warnings are its own, under .build/checkouts/).
#
#   scripts/check-warnings.sh BUILD_LOG        scripts/test.sh passes the output of its `swift build --build-tests`
#
# A build is incremental: its log holds the warnings of the files it compiled. On a fresh clone, as CI runs it, that
# is every file of every target; after an earlier build, only the files compiled again (changed, or depending on a
# change), so a warning in a file left alone since is not seen again. For the whole check locally, build from a clean
# .build (`rm -rf .build && scripts/test.sh`). SwiftPM's own notes (a dependency's unhandled files, the `-pthread`
# that glib's pkg-config file asks for and SwiftPM refuses) name no file here and do not count.
set -euo pipefail
cd "$(dirname "$0")/.."
log="${1:?usage: scripts/check-warnings.sh BUILD_LOG}"
# This checkout's path as the compiler prints it (resolved or not), its regex characters escaped.
escape() { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }
roots="$(escape "$(pwd -P)")|$(escape "$PWD")"
found=$(grep -E "^($roots)/(Sources|Tests|Fuzz)/[^:]+:[0-9]+:([0-9]+:)? warning:" "$log" | sort -u || true)
if [[ -n "$found" ]]; then
  echo "warnings from the project's own code:" >&2
  echo "$found" >&2
  exit 1
fi
echo "warnings: none from Sources/, Tests/ or Fuzz/ in the files this build compiled"
