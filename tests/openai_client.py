"""A real OpenAI client streams a forced tool call from `toolscope serve-demo`.

Usage: python3 tests/openai_client.py BASE_URL TOOLS_JSON PROMPT

Prints one JSON line: {"name": ..., "arguments": <the accumulated argument string>,
"finish_reason": ...}. The Rust test (tests/openai_client.rs) checks that the arguments parse to
what the demo model meant.
"""

import json
import sys

from openai import OpenAI


def main() -> None:
    base_url, tools_json, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
    tools = json.loads(tools_json)
    client = OpenAI(base_url=base_url, api_key="demo-needs-no-key", max_retries=0, timeout=30)
    forced = tools[0]["name"]
    stream = client.chat.completions.create(
        model="demo",
        messages=[{"role": "user", "content": prompt}],
        tools=[{"type": "function", "function": t} for t in tools],
        tool_choice={"type": "function", "function": {"name": forced}},
        stream=True,
    )
    # Accumulate as the openai docs show: fragments keyed by index.
    calls: dict[int, dict] = {}
    finish_reason = None
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        for tc in choice.delta.tool_calls or []:
            call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function and tc.function.name:
                call["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                call["arguments"] += tc.function.arguments
        if choice.finish_reason:
            finish_reason = choice.finish_reason
    if not calls:
        sys.exit("no tool call was streamed")
    first = calls[min(calls)]
    print(json.dumps({**first, "finish_reason": finish_reason, "calls": len(calls)}))


if __name__ == "__main__":
    main()
