#!/usr/bin/env bash
# Streams 2 GiB into `toolscope run` from a loopback server (scripts/big_stream_server.py) and
# prints toolscope's maximum resident memory, measured by /usr/bin/time -v. Three cases:
#   events  2 GiB of answer text in 16 KiB SSE events, then the connection is cut;
#   line    one SSE event that never ends (2 GiB);
#   ndjson  one Ollama NDJSON line that never ends (2 GiB).
# Each must stay under 200 MB resident and end with an `error` part that marks the answer as cut
# (the stream ended early; the event passed the --max-event-mib limit). Not run by the tests.
#
# Usage: scripts/memory-2gb.sh [BINARY] [SIZE_BYTES]   (default: target/release/toolscope, else
# target/debug/toolscope; 2 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/toolscope}"
[ -x "$bin" ] || bin=target/debug/toolscope
size="${2:-$((2 << 30))}"
limit_kb=$((200 * 1000))
dir="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
status=0
for mode in events line ndjson; do
  python3 scripts/big_stream_server.py --mode "$mode" --size "$size" >"$dir/server-$mode.out" &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q listening "$dir/server-$mode.out" 2>/dev/null && break; sleep 0.1; done
  url="$(sed -n 's/^listening on //p' "$dir/server-$mode.out")"
  provider=openai base="$url/v1"
  [ "$mode" = ndjson ] && provider=ollama base="$url"
  start=$(date +%s.%N)
  # The parts go through awk, which keeps only their count and the last one (not 2 GiB on disk).
  set +e
  /usr/bin/time -v -o "$dir/time.txt" "$bin" run --provider "$provider" --model big \
    --base-url "$base" --idle-timeout 60 "Write forever." 2>"$dir/err.txt" |
    awk '{ n++; last = $0 } END { print n; print last }' >"$dir/summary.txt"
  code=${PIPESTATUS[0]}
  set -e
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  kill "${pids[-1]}" 2>/dev/null || true
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
  lines=$(sed -n 1p "$dir/summary.txt")
  last="$(sed -n 2p "$dir/summary.txt" | cut -c1-200)"
  cut=no
  case "$last" in
    *'"type":"error"'*) cut=yes ;;
  esac
  ok=yes
  [ "$rss_kb" -lt "$limit_kb" ] && [ "$cut" = yes ] && [ "$code" = 1 ] || ok=no
  [ "$ok" = yes ] || status=1
  printf '%-7s max resident %6d MB  exit %d  %5s s  %d parts  marked cut: %s  -> %s\n' \
    "$mode" $((rss_kb / 1000)) "$code" "$secs" "$lines" "$cut" \
    "$([ "$ok" = yes ] && echo ok || echo FAIL)"
  echo "        last part: $last"
done
exit $status
