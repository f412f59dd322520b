#!/bin/sh
# Runs one libFuzzer target for a fixed budget over its seed corpus (ctest
# fuzz_<target>; docs/fuzzing.md). New inputs go to <work>/new, crash
# reproducers to <work>/artifacts/, never into the source tree.
#   run_fuzz_target.sh <binary> <seed corpus dir> <work dir> <seconds> <rss MB>
set -eu
binary=$1 corpus=$2 work=$3 seconds=$4 rss_mb=$5
mkdir -p "$work/new" "$work/artifacts"
# -timeout: one input running longer than this is a finding (a hang).
exec "$binary" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout=10 \
  -max_len=8192 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/new" "$corpus"
