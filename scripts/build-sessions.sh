#!/usr/bin/env bash
# Rebuilds the bundled sessions in sessions/ by recording toolscope itself: `toolscope run
# --save` against the demo model (OpenAI wire, every tool-choice mode and text protocol, a tool
# loop on the demo MCP server, and its failure demos) and against loopback servers that answer with Anthropic, Gemini and Ollama
# shaped streams (scripts/mock_provider.py, replaying tests/data transcripts at a steady pace), and
# the OpenAI Responses wire the same way.
#
#   scripts/build-sessions.sh              # every session, from scratch
#   scripts/build-sessions.sh NAME...      # only these (e.g. protocol-deepseek-v3.1), the rest kept
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
ts=${CARGO_TARGET_DIR:-target}/release/toolscope
out=sessions
tools=examples/tools.json
only=("$@")
mkdir -p "$out"
if [ ${#only[@]} -eq 0 ]; then
  # The real model's sessions are kept when it is not set up here (see the end).
  if python3 scripts/real_server.py ready 2>/dev/null; then
    rm -f "$out"/*.json
  else
    find "$out" -maxdepth 1 -name '*.json' ! -name 'real-*' ! -name 'failure-real-*' -delete
  fi
fi

wanted() { # name: whether this run records it
  [ ${#only[@]} -eq 0 ] && return 0
  local n
  for n in "${only[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

record() { # name, then run arguments
  local name=$1; shift
  wanted "$name" || return 0
  "$ts" run "$@" --save "$out/$name.json" > /dev/null || true
  echo "recorded $out/$name.json"
}

# Tool-choice modes, native, on the demo model.
record mode-auto --provider demo --tools "$tools" --tool-choice auto "What's the weather in Paris for the next 3 days?"
record mode-required --provider demo --tools "$tools" --tool-choice required "Search for the latest news about the James Webb telescope"
record mode-none --provider demo --tools "$tools" --tool-choice none "What's the weather in Paris?"
record mode-forced-tool --provider demo --tools "$tools" --tool-choice tool:write_file "Save a packing list for a week in Tokyo to /tmp/packing.md"
record parallel-calls --provider demo --tools "$tools" "What's the weather in Paris and Tokyo?"

# Every text protocol of the registry, on an OpenAI-compatible wire.
for p in $("$ts" protocols | cut -f1); do
  record "protocol-$p" --provider demo --tools "$tools" --protocol "$p" "What's the weather in Lisbon for 2 days?"
done
record protocol-hermes-forced --provider demo --tools "$tools" --protocol hermes --tool-choice required "Search the web for Rust 2024 edition changes"

# An MCP tool loop: the demo model calls a tool of the demo MCP server, the call runs there, and
# the next turn answers from its result. The server is found on the PATH, so the session records
# it as a user types it.
if wanted mcp-loop; then
  (PATH="$(cd "$(dirname "$ts")" && pwd):$PATH"
   record mcp-loop --provider demo --mcp 'toolscope serve-mcp-demo' --execute "What's the weather in Paris?")
fi

# Failures.
record failure-malformed-call --provider demo --tools "$tools" --protocol hermes "#malformed What's the weather in Oslo?"
record failure-cut-stream --provider demo --tools "$tools" "#cut Tell me about the weather in Rome."
record failure-rate-limit --provider demo --tools "$tools" "#429 What's the weather in Lima?"

# The native wires of the other providers.
native() { # name, provider, model, transcript folder, content type
  local name=$1 provider=$2 model=$3 dir=crates/toolscope-core/tests/data/$4 ctype=$5
  wanted "$name" || return 0
  local body; body=$(ls "$dir"/stream.* | head -1)
  local log; log=$(mktemp)
  python3 scripts/mock_provider.py --body "$body" --content-type "$ctype" > "$log" &
  local pid=$!
  local url=""
  for _ in $(seq 1 100); do url=$(sed -n 's/^listening on //p' "$log"); [ -n "$url" ] && break; sleep 0.1; done
  python3 -c "import json,sys; json.dump(json.load(open('$dir/request.json'))['tools'], open('$log.tools','w'))"
  local prompt; prompt=$(python3 -c "import json; print(json.load(open('$dir/request.json'))['messages'][-1]['content'])")
  record "$name" --provider "$provider" --model "$model" --base-url "$url" --tools "$log.tools" "$prompt"
  kill "$pid"; rm -f "$log" "$log.tools"
}
native wire-anthropic anthropic claude-sonnet-4-5 anthropic/tool-call text/event-stream
native wire-gemini gemini gemini-2.5-flash gemini/function-call text/event-stream
native wire-ollama ollama qwen3:8b ollama/tool-calls application/x-ndjson
native wire-openai openai gpt-4o-mini openai/parallel-calls text/event-stream
native wire-openai-responses openai-responses gpt-5-mini openai-responses/reasoning-call text/event-stream
# A lint finding on purpose: OpenAI answers a forced tool with finish_reason `stop`.
native failure-lint openai gpt-4o-mini openai/forced-tool-call text/event-stream

# A real model on a real server (scripts/real_server.py: llama.cpp's server with
# Qwen2.5-Coder-0.5B-Instruct), at temperature 0: recorded when it is set up here.
if python3 scripts/real_server.py ready 2>/dev/null; then
  coproc SRV { python3 scripts/real_server.py serve 2>/dev/null; }
  read -r line <&"${SRV[0]}"
  url=${line#listening on }/v1
  real() { # name, then run arguments
    record "$1" --provider openai --base-url "$url" --model qwen2.5-coder-0.5b-instruct \
      --temperature 0 --max-tokens 160 "${@:2}"
  }
  paris="What is the weather in Paris?"
  real real-native --tools "$tools" "$paris"
  real real-auto --tools "$tools" --protocol auto "$paris"
  real real-hermes-required --tools "$tools" --protocol hermes --tool-choice required "$paris"
  real real-hermes-forced --tools "$tools" --protocol hermes --tool-choice tool:get_weather "$paris"
  real real-yaml-xml --tools "$tools" --protocol yaml-xml "$paris"
  real failure-real-overflow --tools "$tools" "$(python3 -c 'print("Paris weather. " * 3000)')"
  eval "exec ${SRV[1]}>&-"
  wait "$SRV_PID" 2>/dev/null || true
fi

# Name each session after its file, and drop the loopback base URLs (their ports are gone; a
# re-send goes to the provider's own endpoint).
python3 - "$out" "${only[@]}" <<'PY'
import json, pathlib, sys
only = set(sys.argv[2:])
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    if only and f.stem not in only:
        continue
    s = json.loads(f.read_text())
    s["name"] = f.stem
    base = s["request"].get("baseUrl", "")
    if base.startswith("http://127.0.0.1"):
        del s["request"]["baseUrl"]
    f.write_text(json.dumps(s, indent=2, ensure_ascii=False) + "\n")
PY
ls -1 "$out"
