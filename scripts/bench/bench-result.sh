# Sourced by the benchmark scripts: `bench_result MEASUREMENT THIS REFERENCE RATIO GOAL MET` appends one row to
# $BENCH_RESULTS (tab-separated) when it is set, which is how scripts/bench/bench.sh collects its summary table. Without
# BENCH_RESULTS it does nothing, so each script still runs on its own.
bench_result() {
  [[ -n "${BENCH_RESULTS:-}" ]] || return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >> "$BENCH_RESULTS"
}
