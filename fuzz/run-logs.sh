#!/usr/bin/env bash
# Runs the log parser's own fuzz target (fuzz/logs: crates/logs alone) for SECONDS seconds
# (default 600) on a copy of the log parser's committed corpus and the explain set's logs,
# with run-all.sh's per-input limits. Writes fuzz/out/log_scan.log (libFuzzer's output, its
# final stats and the wall, user and system seconds) and crash inputs to
# fuzz/artifacts/log_scan/; prints one line.
#
#   cargo +nightly fuzz build -O --fuzz-dir fuzz/logs && nice -n 19 fuzz/run-logs.sh [SECONDS]
set -u
cd "$(dirname "$0")/.."
seconds=${1:-600}
bin=fuzz/logs/target/x86_64-unknown-linux-gnu/release/log_scan
corpus=fuzz/out/log_scan-corpus
log=fuzz/out/log_scan.log
mkdir -p "$corpus" fuzz/artifacts/log_scan
cp -n fuzz/corpus/log_parser/* "$corpus"/ 2>/dev/null || true
/usr/bin/time -f "time: wall %e s, user %U s, system %S s" -a -o "$log" \
  "$bin" "$corpus" tests/fixtures/devset examples/logs \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
  -artifact_prefix=fuzz/artifacts/log_scan/ >"$log" 2>&1
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
crashes=$(find fuzz/artifacts/log_scan -name 'crash-*' | wc -l)
timeouts=$(find fuzz/artifacts/log_scan -name 'timeout-*' | wc -l)
ooms=$(find fuzz/artifacts/log_scan -name 'oom-*' | wc -l)
echo "log_scan: executions ${runs:-?}, crashes $crashes, timeouts $timeouts, out of memory $ooms; $(grep '^time:' "$log" | tail -1)"
