#!/usr/bin/env bash
# The house style (.swift-format: Hummingbird's settings, 150 columns), applied with the toolchain's `swift format`.
#
#   scripts/format.sh            rewrites every Swift file tracked by git in place
#   scripts/format.sh --check    changes nothing; fails listing each place that differs (`swift format lint --strict`),
#                                as scripts/test.sh runs it
#
# The generated OpenAPI code (Sources/TrailAPI/Generated, scripts/generate-openapi.sh) is left as the generator wrote it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | grep -v '^Sources/TrailAPI/Generated/')
if [[ "${1:-}" == --check ]]; then
  swift format lint --strict --parallel "${files[@]}"
else
  swift format format --in-place --parallel "${files[@]}"
fi
