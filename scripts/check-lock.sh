#!/usr/bin/env bash
# Fails when the build resolved any package (direct or transitive) to another version than dependencies.lock names.
# Package.swift pins the direct dependencies with `exact:`; this holds the ones they bring in, so a machine that reaches
# the public package hosts cannot build newer versions than the ones tested, from the same commit.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f Package.resolved ]] || swift package resolve >/dev/null
python3 - <<'PY'
import json, sys
resolved = {p["identity"]: p["state"].get("version") for p in json.load(open("Package.resolved"))["pins"]}
locked = {}
for line in open("dependencies.lock"):
    line = line.strip()
    if line and not line.startswith("#"):
        name, version = line.split()
        locked[name] = version
problems = [f"{name}: resolved {resolved.get(name)}, locked {locked.get(name)}"
            for name in sorted(set(resolved) | set(locked)) if resolved.get(name) != locked.get(name)]
if problems:
    print("dependencies.lock does not match the build's Package.resolved:\n  " + "\n  ".join(problems), file=sys.stderr)
    print("A dependency changed: update Package.swift's exact pins and dependencies.lock together.", file=sys.stderr)
    sys.exit(1)
print(f"check-lock: {len(locked)} packages at their locked versions")
PY
