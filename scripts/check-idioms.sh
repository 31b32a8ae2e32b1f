#!/usr/bin/env bash
# The house idioms, counted in Sources/ (and the server tests' clean-up): each count must stay at or under its ceiling, and a ceiling only ever moves
# down, towards its goal. Run by scripts/test.sh; docs/architecture.md ("Idioms") says what each one is instead.
#
#   what                                   ceiling  goal
#   closure wrappers around a handler      (below)  0     `router.get("/x", use: handler)`, not `{ request, context in … }`
#   requireUser() in a handler             (below)  0     a signed-in context type carries the user
#   `.id!` in Sources/                     (below)  0     a stored record's id is not optional; `New` inserts
#   `public` in TrailServer                (below)  20    `package` for what the executable and tests use
#   `package` declarations in TrailServer  (below)  400   `internal` unless the executable uses it (tests: @testable)
#   files naming a "TRAIL_…" variable      (below)  1 file  each setting declared once (App/Settings.swift)
#   `Cookie(` constructions                (below)  1     the one in `AppCookie`, whose named cookies everything uses
#   hand-made JSON answers and decoding    0        0     the contexts' `responseEncoder` and `requestDecoder`
#   forms read by hand                     0        0     a `PanelForm` per handler, `request.decode(as:context:)`
#   tour look-ups in handlers              (below)  —     a tour or waypoint group's context carries the tour
#   audit actions as string literals       0        0     `AuditAction`
#   audit object types as string literals  0        0     `AuditAction.objectType`, derived from the action
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

# A closure that only forwards to a handler, on one line or several; one that passes more (a route family's role or
# direction) is allowed. Read a whole file at a time, so a forwarder wrapped over lines counts too.
forwarders() {
  find Sources -name '*.swift' -print0 | xargs -0 perl -0777 -ne '
    my $n = () = /\{\s*(?:request|_),\s*(?:context|_)\s+in\s+(?:return\s+)?(?:try\s+)?(?:await\s+)?[a-zA-Z.]+\((?:request|_),\s*context\)\s*\}/g;
    $total += $n; END { print $total + 0 }'
}
check "closure wrappers around a handler" "$(forwarders)" 0 0
check "requireUser() in a handler" "$(count 'requireUser\(\)' Sources)" 0 0
check ".id! in Sources/" "$(count '\.id!' Sources)" 0 0
check "public in TrailServer" "$(count '^\s*(@[A-Za-z]+ )*(public|open) [a-z]' Sources/TrailServer)" 0 20
check "package declarations in TrailServer" "$(count '^\s*(@[A-Za-z]+ )*package [a-z]' Sources/TrailServer)" 244 400
# A variable's name as a string of its own ("TRAIL_PORT"), in any Swift file: that is how a file reads one, whatever
# it reads it with (`environment[…]`, `getenv`, a `Setting`). Names inside prose (help texts, comments) do not count.
check "files naming TRAIL_ variables" "$(grep -rlE --include='*.swift' '"TRAIL_[A-Z0-9_]+"' Sources | wc -l)" 1 1
check "audit actions as string literals" "$(count 'action: "[a-z][a-zA-Z]*\.' Sources)" 0 0
check "audit object types as string literals" "$(count 'objectType: "' Sources)" 0 0
check "test folders removed by hand" "$(count '\.remove\(\)' Tests/TrailServerTests)" 0 0
check "Cookie( constructions" "$(grep -rohE --include='*.swift' '\bCookie\(' Sources | wc -l)" 1 1
# Ceilings without a goal yet: the counts when they were first taken, so they may only go down.
check "hand-made JSON answers and decoding" "$(grep -rohE --include='*.swift' '\bJSONResponse\b|\bdecodeJSON\(' Sources | wc -l)" 0 0
check "forms read by hand" "$(grep -rohE --include='*.swift' '\bFormFields\b|\.form\(context' Sources | wc -l)" 0 0
# A tour looked up by hand (`authorization.tour(`/`editableTour(`, or its `{id}` read) rather than handed to the
# handler in a `TourContext`, `WaypointContext` or `AssetContext` by its route group's middleware. What is left: ids of
# other things (users, sites, invitations) and tours named in a body rather than a path (a tus upload's metadata, the
# publishing service's own check).
lookups=$(($(count 'authorization\.(tour|editableTour)\(' Sources) + $(count 'parameters\.require\("id"' Sources)))
check "tour look-ups in handlers" "$lookups" 15 —
exit "$failed"
