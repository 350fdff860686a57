#!/usr/bin/env bash
# Measures the playground's CPU use while nothing changes: starts the binary in a private tmux
# at 160x48, lets it draw, runs one request on the demo model (so a finished run is on screen),
# then reads the process's CPU time (utime + stime, /proc/<pid>/stat fields 14 and 15) before
# and after an idle period. An idle playground draws nothing and arms no timer: expect 0 ticks.
#
# With SESSION=FILE it opens that session instead, pauses its replay with F5 at once, and measures
# the paused replay (a paused playback arms no timer either).
#
# Usage: [SESSION=FILE] scripts/idle-cpu.sh [SECONDS] [BINARY]   (default: 10 s,
# target/release/toolscope)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
bin="${2:-target/release/toolscope}"
[ -x "$bin" ] || cargo build --release --quiet
sock="toolscope-idle-$$"
dir="$(mktemp -d)"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"' EXIT

args=""
[ -n "${SESSION:-}" ] && args="--session $(realpath "$SESSION")"
tmux -L "$sock" new-session -d -s idle -x 160 -y 48 \
  "XDG_DATA_HOME=$dir XDG_CONFIG_HOME=$dir exec $(realpath "$bin") $args"
wait_for() {
  for _ in $(seq 1 300); do
    tmux -L "$sock" capture-pane -p -t idle | grep -q "$1" && return 0
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2
  exit 1
}
wait_for " Parts "
if [ -n "${SESSION:-}" ]; then
  tmux -L "$sock" send-keys -t idle F5
  wait_for "● paused"
else
  tmux -L "$sock" send-keys -t idle C-r
  wait_for "● done"
fi
pid="$(tmux -L "$sock" list-panes -t idle -F '#{pane_pid}')"
hz="$(getconf CLK_TCK)"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
sleep 1 # let the last frame settle
before="$(ticks)"
sleep "$secs"
after="$(ticks)"
used=$((after - before))
echo "idle ${secs} s: ${used} ticks of CPU (1 tick = 1/${hz} s) = $(awk -v t="$used" -v h="$hz" -v s="$secs" 'BEGIN { printf "%.2f%%", 100 * t / h / s }') of one core"
