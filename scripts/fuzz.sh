#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, -sanitize=fuzzer,address) of the parsers that read what strangers send:
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     default 120 s each, every target
#
# Targets (Fuzz/TrailFuzz.swift): range (the Range header), multipart (the multipart feeder against MultipartKit's
# parser: the same parts and bytes whatever the chunking), importer (GeoJSON and GPX imports), manifest (manifest.json)
# and zip (the package zip reader and verifier). Each starts from its seeds in Fuzz/corpus/<target> (zip seeds are
# made here: a real package and a few broken ones), copied to a work folder so the repository stays clean. A crash
# input is kept in fuzz-artifacts/<target>/ and its path printed: turn it into a test, fix, run again.
#
# Not part of the test command: a run is bounded by time, not by a result. Builds into .build-fuzz (TRAIL_FUZZ=1 adds
# the target to Package.swift); the first build compiles every dependency with the sanitizers and takes minutes.
set -euo pipefail
seconds="${1:-120}"; shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
targets=("$@"); ((${#targets[@]})) || targets=(range multipart importer manifest zip)
work="$(mktemp -d "${TMPDIR:-/tmp}/trail-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "building the fuzz target (.build-fuzz) ..."
(cd "$root" && TRAIL_FUZZ=1 swift build --product TrailFuzz --scratch-path .build-fuzz \
   -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing 2>&1 | grep -E "error:|Build" | tail -5)
bin="$(cd "$root" && TRAIL_FUZZ=1 swift build --scratch-path .build-fuzz --show-bin-path)/TrailFuzz"
[[ -x "$bin" ]] || { echo "no fuzz binary at $bin" >&2; exit 1; }

# Zip seeds: a small well-formed package layout (unsigned), one truncated, one with a lying size, one with ../ in a name.
mkdir -p "$work/seeds/zip"
python3 - "$work/seeds/zip" <<'PY'
import io, json, sys, zipfile
out = sys.argv[1]
manifest = json.dumps({"formatVersion": 1, "packageId": "p", "version": 1, "packageName": "P", "description": "", "park": "Park",
                       "createdAt": "2026-01-01T00:00:00Z", "bounds": {"north": 1, "south": 0, "east": 1, "west": 0}, "waypoints": []}).encode()
def package(entries, name):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for path, body in entries:
            z.writestr(path, body)
    data = buffer.getvalue()
    open(f"{out}/{name}", "wb").write(data)
    return data
good = package([("manifest.json", manifest), ("manifest.sig", b"\0" * 64), ("media/1/a.txt", b"hello")], "package.zip")
open(f"{out}/truncated.zip", "wb").write(good[: len(good) // 2])
open(f"{out}/lying-size.zip", "wb").write(good.replace(b"hello", b"hellp", 1))
package([("../evil.txt", b"x"), ("manifest.json", manifest)], "traversal.zip")
PY

status=0
for target in "${targets[@]}"; do
  corpus="$work/corpus/$target"; mkdir -p "$corpus" "$root/fuzz-artifacts/$target"
  cp -r "$root/Fuzz/corpus/$target/." "$corpus/" 2>/dev/null || true
  [[ "$target" == zip ]] && cp "$work/seeds/zip/"* "$corpus/"
  echo "fuzzing $target for $seconds s ..."
  if ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no TRAIL_FUZZ_TARGET="$target" "$bin" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 -detect_leaks=0 \
       -artifact_prefix="$root/fuzz-artifacts/$target/" -print_final_stats=1 > "$work/$target.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -oE 'cov: [0-9]+' "$work/$target.log" | tail -1 || true)
    echo "  $target: no crash in $runs runs ($cov, corpus $(ls "$corpus" | wc -l) inputs)"
  else
    status=1
    echo "  $target: CRASH; input kept in fuzz-artifacts/$target/:"
    grep -E "ERROR|Fatal error|Precondition|SUMMARY|Test unit written" "$work/$target.log" | head -10
  fi
done
exit $status
