#!/usr/bin/env bash
# Instructions per MB of each protocol's stream parser, counted by valgrind (cachegrind), so the
# figure does not move with the machine's load. The text is the parser benchmark's 1000-call text
# (about 1 MB); the count is the difference between parsing it twice in one stream and once, so
# the program's start and the text's generation cancel out.
#
#   scripts/instructions.sh [--whole] [PROTOCOL...]    (default: every registered protocol)
#
# --whole: the whole-text column only (one parse of the text as a finished output; quick).
#
# Prints one line a protocol: instructions per MB at 64-byte and at 1-byte chunks, the 1-byte
# figure over hermes's, measured in the same run, and the whole-text path's (the text as one
# finished output, `parse_generated`).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
# Builds the benchmark, and names its binary.
bin=$(cargo bench -q -p toolscope-core --bench parsers --no-run --message-format=json |
  python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="parsers" and m.get("executable"):
        print(m["executable"])')
whole_only=0
if [ "${1:-}" = --whole ]; then whole_only=1; shift; fi
if [ $# -eq 0 ]; then
  set -- $(cargo run -q -- protocols --json | python3 -c 'import json,sys
for l in sys.stdin: print(json.loads(l)["name"])')
fi
[ $# -gt 0 ] || { echo "name the protocols" >&2; exit 2; }
count() { # PROTOCOL CHUNK COPIES -> instructions
  TOOLSCOPE_BENCH_ONCE="$1:$2:$3" valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null "$bin" 2>&1 >/dev/null |
    # (The benchmark harness starts a helper process at start-up: the largest count is ours.)
    awk '/I *refs:/ {gsub(",","",$NF); if ($NF+0 > max) max = $NF+0} END {printf "%d\n", max}'
}
per_mb() { # PROTOCOL CHUNK -> instructions per MB (10^6 bytes) of the 1000-call text
  local one two bytes
  one=$(count "$1" "$2" 1)
  two=$(count "$1" "$2" 2)
  bytes=$(TOOLSCOPE_BENCH_ONCE="$1:$2:1" "$bin" | awk '{print $6}')
  echo $(( (two - one) * 1000000 / bytes ))
}
if [ $whole_only = 1 ]; then
  printf '%-16s %14s\n' protocol "whole /MB"
  for p in "$@"; do
    whole=$(per_mb "$p" whole)
    printf '%-16s %13sK\n' "$p" $((whole / 1000))
  done
  exit 0
fi
hermes1=$(per_mb hermes 1)
printf '%-16s %14s %14s %10s %14s\n' protocol "64-byte /MB" "1-byte /MB" "× hermes" "whole /MB"
for p in "$@"; do
  s64=$(per_mb "$p" 64)
  s1=$([ "$p" = hermes ] && echo "$hermes1" || per_mb "$p" 1)
  whole=$(per_mb "$p" whole)
  printf '%-16s %13sM %13sM %9s× %13sM\n' "$p" $((s64 / 1000000)) $((s1 / 1000000)) \
    "$(python3 -c "print(f'{$s1/$hermes1:.2f}')")" $((whole / 1000000))
done
