#!/usr/bin/env bash
# Writes the API dumps of a release that scripts/check-api.sh compares this tree with, and names the release in
# .api-baseline. Run it when a release of the library products (TrailClient, PackageFormat) is tagged, and commit
# Tests/api-baseline/ and .api-baseline with the tag's commit or right after it.
#
#   scripts/api-baseline.sh [TAG]        default: the newest release tag (v*), else the release .api-baseline names
#
# It builds the release's modules in a folder of its own under .build/ (minutes) and dumps their public API with
# swift-api-digester, through `swift package diagnose-api-breaking-changes --regenerate-baseline`. The dumps are
# kept as the tool writes them, less the tool's command line (this machine's build paths, nothing of the API).
# Dumps from one toolchain are read by the same or a later one; after a toolchain upgrade that refuses them, run this
# again for the same tag.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tag, else (a clone without tags) the release .api-baseline names; its commit from git, else from .api-baseline.
tag="${1:-$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || awk '!/^#/ && NF { print $1; exit }' .api-baseline)}"
commit=$(git rev-parse --verify --quiet "$tag^{commit}" || awk -v tag="$tag" '!/^#/ && $1 == tag { print $2; exit }' .api-baseline)
[[ -n "$commit" ]] || { echo "api-baseline: no commit for $tag (tag it, or fetch the tags)" >&2; exit 1; }
scratch=.build/api-baseline-new
rm -rf "$scratch"
echo "dumping the public API of TrailClient and PackageFormat at $tag ($commit) ..."
# The command also compares this tree with the new dumps; its verdict is scripts/check-api.sh's business.
swift package diagnose-api-breaking-changes "$commit" --products TrailClient PackageFormat \
  --baseline-dir "$scratch" --regenerate-baseline || true
for module in TrailClient PackageFormat; do
  [[ -s "$scratch/$commit/$module.json" ]] || { echo "api-baseline: no dump of $module was written" >&2; exit 1; }
done
rm -rf Tests/api-baseline
mkdir -p "Tests/api-baseline/$commit"
for module in TrailClient PackageFormat; do
  python3 - "$scratch/$commit/$module.json" "Tests/api-baseline/$commit/$module.json" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text, n = re.subn(r',\n\s*"tool_arguments": \[.*?\n\s*\]', "", text, flags=re.S)
assert n == 1, "the dump's tool_arguments were not found"
open(sys.argv[2], "w").write(text)
PY
done
cat > .api-baseline <<TEXT
# The last release of the library products (TrailClient, PackageFormat): its tag and its commit. scripts/check-api.sh
# compares the public API with it (the tag when the clone has tags, else the commit), using the dumps that
# scripts/api-baseline.sh wrote to Tests/api-baseline/.
$tag $commit
TEXT
echo "wrote Tests/api-baseline/$commit/ and .api-baseline"
