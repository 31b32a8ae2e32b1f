#!/usr/bin/env bash
# The public API of the library products (TrailClient, PackageFormat) against the last release: fails when a change
# would break an app that builds against that release (a removed or renamed type, member or case, a changed
# signature). Run by scripts/test.sh; `swift package diagnose-api-breaking-changes` builds the release's modules in a
# folder of its own under .build and compares their API with this tree's.
#
#   scripts/check-api.sh [BASELINE]      default: the newest release tag (v*), else the commit named in .api-baseline
#
# A deliberate break: raise the major version of the next release (docs/api.md, "Versions"), tag it,
# and write its commit into .api-baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline="${1:-}"
if [[ -z "$baseline" ]]; then
  # A clone without tags (some CI checkouts) still has the commit: .api-baseline names the release's commit too.
  baseline=$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || true)
  [[ -n "$baseline" ]] || baseline=$(awk '!/^#/ && NF { print $NF; exit }' .api-baseline)
fi
echo "public API of TrailClient and PackageFormat against $baseline ..."
swift package diagnose-api-breaking-changes "$baseline" --products TrailClient PackageFormat
