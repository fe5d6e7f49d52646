#!/usr/bin/env bash
# Runs every fuzz target at once for SECONDS seconds each (default 600), each on its
# committed corpus (fuzz/corpus/TARGET) and the real files it starts from: fuzz/seeds/ for
# the data readers, the example scripts and rule fixtures for lint, the logs of the
# explain set for the log parser. Per-input limits as the readers promise: -timeout=10,
# -rss_limit_mb=1024. Writes fuzz/out/TARGET.log (libFuzzer's output, its final stats
# and the wall, user and system seconds), crash and timeout inputs to fuzz/artifacts/TARGET/,
# and prints one line per target.
#
#   cargo +nightly fuzz build -O && nice -n 19 fuzz/run-all.sh [SECONDS]
set -u
cd "$(dirname "$0")/.."
seconds=${1:-600}
bin=fuzz/target/x86_64-unknown-linux-gnu/release
data_targets="check_arrow check_csv check_jsonl check_npy check_npz check_parquet check_png check_safetensors check_txt"

seeds_of() {
  case "$1" in
    check_readers) echo fuzz/seeds/check_csv fuzz/seeds/check_npy fuzz/seeds/check_txt ;;
    lint_parser) echo examples tests/fixtures/lint/rules ;;
    log_parser) echo tests/fixtures/devset examples/logs ;;
    *) echo "fuzz/seeds/$1" ;;
  esac
}

mkdir -p fuzz/out
pids=()
for target in $data_targets check_readers lint_parser log_parser; do
  mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target"
  # shellcheck disable=SC2046 # the seed directories are separate arguments
  /usr/bin/time -f "time: wall %e s, user %U s, system %S s" -a -o "fuzz/out/$target.log" \
    "$bin/$target" "fuzz/corpus/$target" $(seeds_of "$target") \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$target/" >"fuzz/out/$target.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"

for target in $data_targets check_readers lint_parser log_parser; do
  log="fuzz/out/$target.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  crashes=$(find "fuzz/artifacts/$target" -name 'crash-*' | wc -l)
  timeouts=$(find "fuzz/artifacts/$target" -name 'timeout-*' | wc -l)
  ooms=$(find "fuzz/artifacts/$target" -name 'oom-*' | wc -l)
  echo "$target: executions ${runs:-?}, crashes $crashes, timeouts $timeouts, out of memory $ooms; $(grep '^time:' "$log" | tail -1)"
done
