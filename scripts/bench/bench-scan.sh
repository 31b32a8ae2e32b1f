#!/usr/bin/env bash
# Benchmark the in-process libclamav scanner (MalwareScan.ClamAVEngineScanner) against `clamscan`
# on the same files with the same signatures.
#
#   scripts/bench/bench-scan.sh                  # 200 files: 10 of 10–50 MB, the rest 1 KiB–2 MiB
#   BENCH_FILES=400 BENCH_CONCURRENCY=1,2,4 scripts/bench/bench-scan.sh
#
# The in-process side runs the TRAIL_BENCH-gated test Tests/MalwareScanTests/ScanBenchmark.swift,
# built in release mode inside a throwaway package that links only MalwareScan, CClamAV, swift-log
# and the MalwareScan tests (so the rest of the repository need not compile). Its build folder is
# .build-scan-bench/ (git-ignored). No official signature database is needed: like the tests, the
# script writes the EICAR body signature into a temp database folder, and some files carry EICAR.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench-result.sh
source "$ROOT/scripts/bench/bench-result.sh"
COUNT=${BENCH_FILES:-200}
CONCURRENCY=${BENCH_CONCURRENCY:-1,2}
SCRATCH=${BENCH_SCRATCH:-$ROOT/.build-scan-bench}
SWIFT=${SWIFT:-swift}
CLAMSCAN=${CLAMSCAN:-clamscan}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trail-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILES=$WORK/files
DB=$WORK/db
mkdir -p "$FILES" "$DB"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# --- signatures: the same line as EICAR.signatureLine ---------------------------------------------
hex=$(printf '%s' 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE' | od -An -tx1 | tr -d ' \n')
printf 'Trail.Test.EICAR:0:*:%s\n' "$hex" > "$DB/trail-test-eicar.ndb"
EICAR='X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'

# --- files ----------------------------------------------------------------------------------------
echo "generating $COUNT files in $FILES ..."
RANDOM=42
large=10
infected=0
for ((i = 0; i < COUNT; i++)); do
  if ((i < large)); then
    size=$(( (10 + i * 40 / (large - 1)) * 1024 * 1024 ))        # 10 MB … 50 MB
  else
    size=$(( 1024 + (RANDOM * 32768 + RANDOM) % (2 * 1024 * 1024) ))  # 1 KiB … 2 MiB
  fi
  name=$(printf 'f%04d' "$i")
  if ((i % 3 == 1)); then
    head -c $((size * 3 / 4)) /dev/urandom | base64 > "$FILES/$name.txt"   # text
  else
    head -c "$size" /dev/urandom > "$FILES/$name.bin"                      # binary
  fi
  if ((i % 20 == 7 || i == large - 1)); then                                # EICAR at the end
    f=$(ls "$FILES/$name".*)
    printf '%s' "$EICAR" >> "$f"
    infected=$((infected + 1))
  fi
done
total=$(du -sb "$FILES" | cut -f1)
echo "files: $COUNT, $(awk -v t="$total" 'BEGIN { printf "%.1f MiB", t / 1048576 }'), with EICAR: $infected"
cat "$FILES"/* > /dev/null   # warm the page cache for both sides

# --- in-process: a throwaway package around the MalwareScan sources --------------------------------
PKG=$WORK/pkg
mkdir -p "$PKG/Sources" "$PKG/Tests"
ln -s "$ROOT/Sources/MalwareScan" "$PKG/Sources/MalwareScan"
ln -s "$ROOT/Sources/CClamAV" "$PKG/Sources/CClamAV"
ln -s "$ROOT/Tests/MalwareScanTests" "$PKG/Tests/MalwareScanTests"
log_dep='.package(url: "https://github.com/apple/swift-log.git", from: "1.16.2")'
for candidate in "$ROOT/.build-scan/checkouts/swift-log" "$ROOT/.build/checkouts/swift-log"; do
  if [[ -f $candidate/Package.swift ]]; then
    cp -R "$candidate" "$PKG/swift-log"
    log_dep='.package(path: "swift-log")'
    break
  fi
done
cat > "$PKG/Package.swift" <<SWIFT
// swift-tools-version:6.2
import PackageDescription
let settings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
let package = Package(
    name: "trail-scan-bench",
    dependencies: [$log_dep],
    targets: [
        .systemLibrary(name: "CClamAV", pkgConfig: "libclamav"),
        .target(name: "MalwareScan", dependencies: ["CClamAV", .product(name: "Logging", package: "swift-log")], swiftSettings: settings),
        .testTarget(name: "MalwareScanTests", dependencies: ["MalwareScan"], swiftSettings: settings),
    ]
)
SWIFT

echo "building (release) ..."
(cd "$PKG" && "$SWIFT" build -c release --build-tests -Xswiftc -enable-testing --scratch-path "$SCRATCH" 2>&1 | tail -3)

echo "in-process scan (concurrency $CONCURRENCY) ..."
inproc_log=$WORK/inproc.log
(cd "$PKG" && TRAIL_BENCH=1 TRAIL_BENCH_FILES="$FILES" TRAIL_BENCH_DB="$DB" \
  TRAIL_BENCH_EXPECTED_INFECTED="$infected" TRAIL_BENCH_CONCURRENCY="$CONCURRENCY" \
  "$SWIFT" test -c release -Xswiftc -enable-testing --scratch-path "$SCRATCH" --skip-build \
  --filter 'ScanBenchmark' > "$inproc_log" 2>&1) || { cat "$inproc_log"; exit 1; }
grep '^BENCH' "$inproc_log" || { cat "$inproc_log"; exit 1; }
grep -E 'Test run with' "$inproc_log"

# --- clamscan: same files, same signature, same limits ---------------------------------------------
echo "clamscan ..."
start=$(now)
set +e
"$CLAMSCAN" --no-summary --infected -d "$DB" -r "$FILES" \
  --max-filesize=2047M --max-scansize=2047M --pcre-max-filesize=2047M --max-scantime=120000 \
  --heuristic-alerts=yes --alert-exceeds-max=yes --alert-encrypted-archive=yes > "$WORK/clamscan.out" 2>&1
rc=$?
set -e
end=$(now)
found=$(grep -c ' FOUND$' "$WORK/clamscan.out" || true)
secs=$(elapsed "$start" "$end")
echo "BENCH clamscan $("$CLAMSCAN" --version | cut -d/ -f1) files=$COUNT scan=${secs}s ($(awk -v t="$total" -v s="$secs" 'BEGIN { printf "%.1f MiB/s", t / 1048576 / s }')) infected=$found exit=$rc (includes loading the signature)"
inproc=$(sed -n 's/^BENCH in-process.*scan=\([0-9.]*\)s.*/\1/p' "$inproc_log" | tail -1)
if [[ -n "$inproc" ]]; then
  bench_result "scan, $COUNT files, concurrency ${CONCURRENCY##*,}" "$(awk -v t="$total" -v s="$inproc" 'BEGIN { printf "%.1f MiB/s", t / 1048576 / s }')" \
    "clamscan $(awk -v t="$total" -v s="$secs" 'BEGIN { printf "%.1f MiB/s", t / 1048576 / s }')" \
    "$(awk -v a="$secs" -v b="$inproc" 'BEGIN { printf "%.2f", a / b }')" "(comparison)" "-"
fi
if [[ $found -ne $infected ]]; then
  echo "clamscan found $found infected files, expected $infected" >&2
  exit 1
fi
