#!/usr/bin/env bash
# The public API of the library products (TrailClient, PackageFormat) against the last release: fails when a change
# would break an app that builds against that release (a removed or renamed type, member or case, a changed
# signature). Run by scripts/test.sh.
#
#   scripts/check-api.sh [BASELINE]      default: the newest release tag (v*), else the commit named in .api-baseline
#
# `swift package diagnose-api-breaking-changes` compares this tree's modules with the release's API dumps
# (swift-api-digester's JSON). The release's dumps are committed in Tests/api-baseline/COMMIT/, written by
# scripts/api-baseline.sh when a release is tagged, so the test run does not build the release's modules and their
# dependencies a second time (about 1,100 build steps, minutes). A baseline without committed dumps still works: it is
# built as before, in .build/.
#
# A deliberate break: raise the major version of the next release (docs/api.md, "Versions"), tag it, and run
# scripts/api-baseline.sh (it writes the dumps and .api-baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
baseline="${1:-}"
if [[ -z "$baseline" ]]; then
  # A clone without tags (some CI checkouts) still has the commit: .api-baseline names the release's commit too.
  baseline=$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || true)
  [[ -n "$baseline" ]] || baseline=$(awk '!/^#/ && NF { print $NF; exit }' .api-baseline)
fi
commit=$(git rev-parse --verify --quiet "$baseline^{commit}") || { echo "check-api: no commit named $baseline" >&2; exit 1; }
# SwiftPM looks for BASELINE_DIR/COMMIT/MODULE.json and builds the release only for a module it does not find there.
# A copy under .build/, so that such a build never writes into the committed folder.
dumps=.build/api-baseline
rm -rf "$dumps"
mkdir -p "$dumps/$commit"
if compgen -G "Tests/api-baseline/$commit/*.json" >/dev/null; then
  cp Tests/api-baseline/"$commit"/*.json "$dumps/$commit/"
  echo "public API of TrailClient and PackageFormat against $baseline ($commit, committed dumps) ..."
else
  echo "public API of TrailClient and PackageFormat against $baseline: no dumps committed for $commit, building it (minutes) ..."
fi
swift package diagnose-api-breaking-changes "$commit" --products TrailClient PackageFormat --baseline-dir "$dumps"
