#!/usr/bin/env bash
# The house idioms, counted in Sources/ (and the server tests' clean-up): each count must stay at or under its ceiling, and a ceiling only ever moves
# down, towards its goal. Run by scripts/test.sh; docs/architecture.md ("Idioms") says what each one is instead.
#
#   what                                   ceiling  goal
#   closure wrappers around a handler      (below)  0     `router.get("/x", use: handler)`, not `{ request, context in … }`
#   requireUser() in a handler             (below)  0     a signed-in context type carries the user
#   `.id!` in Sources/                     (below)  0     a stored record's id is not optional; `New` inserts
#   `public` in TrailServer                (below)  20    `package` for what the executable and tests use
#   environment["TRAIL_…"] look-ups        (below)  1 file  each setting declared once
#   audit actions as string literals       0        0     `AuditAction`
#   test folders removed by hand           0        0     `TestScratch` folders, removed by the test's scope (`.scratch`)
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
check() {
  local name="$1" count="$2" ceiling="$3" goal="$4"
  if ((count > ceiling)); then
    echo "idioms: $name: $count, over the ceiling of $ceiling (goal $goal)" >&2
    failed=1
  else
    printf 'idioms: %-40s %5d  (ceiling %d, goal %s)\n' "$name" "$count" "$ceiling" "$goal"
  fi
}
count() { grep -rnE "$@" | wc -l; }

# A closure that only forwards to a handler; one that passes more (a route family's role or direction) is allowed.
check "closure wrappers around a handler" \
  "$(count '\{ *(request|_), *(context|_) in (return )?(try )?(await )?[a-zA-Z.]+\((request|_), context\) \}' Sources)" 0 0
check "requireUser() in a handler" "$(count 'requireUser\(\)' Sources)" 0 0
check ".id! in Sources/" "$(count '\.id!' Sources)" 0 0
check "public in TrailServer" "$(count '^\s*(@[A-Za-z]+ )*(public|open) [a-z]' Sources/TrailServer)" 0 20
check "files reading TRAIL_ variables" "$(grep -rlE 'environment\["TRAIL_' Sources | wc -l)" 1 1
check "audit actions as string literals" "$(count 'action: "[a-z][a-zA-Z]*\.' Sources)" 0 0
check "test folders removed by hand" "$(count '\.remove\(\)' Tests/TrailServerTests)" 0 0
exit "$failed"
