"""The Python package against toolscope's own example outputs (examples/outputs/NAME.txt, one
per protocol of the registry) and bad input. Run from a checkout, after
`pip install ./crates/toolscope-py`: `python -m pytest crates/toolscope-py/tests`."""

import json
import pathlib
import random
import threading

import pytest

import toolscope

ROOT = pathlib.Path(__file__).resolve().parents[3]
TOOLS = json.loads((ROOT / "examples" / "tools.json").read_text())
NAMES = [p["name"] for p in toolscope.protocols()]


def example(name):
    return (ROOT / "examples" / "outputs" / f"{name}.txt").read_bytes()


def collapse_whole(parts):
    out = {"text": "", "reasoning": "", "calls": [], "errors": []}
    for p in parts:
        if p["type"] == "text":
            out["text"] += p["text"]
        elif p["type"] == "reasoning":
            out["reasoning"] += p["text"]
        elif p["type"] == "tool-call":
            out["calls"].append((p["toolName"], p["input"]))
        elif p["type"] == "error":
            out["errors"].append(p.get("reason"))
    return out


def collapse_stream(parts):
    out = {"text": "", "reasoning": "", "calls": [], "errors": []}
    inputs = {}
    for p in parts:
        kind = p["type"]
        if kind == "text-delta":
            out["text"] += p["delta"]
        elif kind == "reasoning-delta":
            out["reasoning"] += p["delta"]
        elif kind == "tool-input-delta":
            inputs[p["id"]] = inputs.get(p["id"], "") + p["delta"]
        elif kind == "tool-call":
            out["calls"].append((p["toolName"], p["input"]))
            # The argument deltas of a call add up to its input.
            assert json.loads(inputs.get(p["toolCallId"], "{}")) == p["input"], p
        elif kind == "error":
            out["errors"].append(p.get("reason"))
    return out


def stream(name, data, size, tools=TOOLS):
    parser = toolscope.StreamParser(name, tools)
    parts = []
    for at in range(0, len(data), size):
        parts += parser.feed(data[at : at + size])
    parts += parser.finish()
    return parts


def test_every_protocol_of_the_registry_is_listed():
    assert len(NAMES) >= 25
    assert "hermes" in NAMES and "harmony" in NAMES and "qwen3-coder" in NAMES
    for p in toolscope.protocols():
        assert set(p) == {"name", "aliases", "families", "reasoning", "reasoningOpen"}


@pytest.mark.parametrize("name", NAMES)
def test_streamed_at_one_byte_equals_the_whole_parse(name):
    data = example(name)
    whole = collapse_whole(toolscope.parse(data, name, TOOLS))
    assert whole["calls"], f"{name}: its example holds a call"
    for size in (1, 7, 64):
        assert collapse_stream(stream(name, data, size)) == whole, (name, size)


@pytest.mark.parametrize("name", NAMES)
def test_each_example_is_detected_as_its_protocol_or_one_that_reads_it_alike(name):
    data = example(name)
    found = toolscope.detect(data, TOOLS)
    assert set(found) == {"protocol", "reason"} and found["reason"]
    assert found["protocol"] in NAMES
    chosen = collapse_whole(toolscope.parse(data, found["protocol"], TOOLS))
    assert chosen["calls"] == collapse_whole(toolscope.parse(data, name, TOOLS))["calls"]


@pytest.mark.parametrize("name", NAMES)
def test_the_tool_prompt_names_every_tool(name):
    prompt = toolscope.render_tools(name, TOOLS)
    for tool in TOOLS:
        assert tool["name"] in prompt, name


def test_str_and_bytes_are_the_same_output():
    text = example("hermes").decode("utf-8")
    assert toolscope.parse(text, "hermes", TOOLS) == toolscope.parse(text.encode(), "hermes", TOOLS)
    # Tools as JSON text or as objects.
    assert toolscope.parse(text, "hermes", json.dumps(TOOLS)) == toolscope.parse(text, "hermes", TOOLS)


def test_a_piece_that_ends_inside_a_character_is_held():
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich 🌧"}}\n</tool_call>'
    parts = stream("hermes", text.encode("utf-8"), 1)
    assert collapse_stream(parts)["calls"] == [("get_weather", {"city": "Zürich 🌧"})]


def test_reset_starts_a_new_output():
    parser = toolscope.StreamParser("hermes", TOOLS)
    data = example("hermes")
    first = parser.feed(data) + parser.finish()
    with pytest.raises(toolscope.ToolscopeError, match="reset"):
        parser.feed(b"more")
    parser.reset()
    again = parser.feed(data) + parser.finish()
    assert collapse_stream(again) == collapse_stream(first)


def test_reasoning_open_is_passed_on():
    text = "thinking about it</think>The answer."
    closed = collapse_whole(toolscope.parse(text, "hermes", TOOLS, reasoning_open=False))
    opened = collapse_whole(toolscope.parse(text, "hermes", TOOLS, reasoning_open=True))
    assert opened["reasoning"] == "thinking about it"
    assert opened["text"] == "The answer."
    assert closed["reasoning"] == ""


def test_coerce_returns_the_value_the_changes_and_the_violations():
    schema = {
        "type": "object",
        "properties": {"days": {"type": "integer"}, "hot": {"type": "boolean"}},
        "required": ["city"],
    }
    value, coercions, violations = toolscope.coerce({"days": "3", "hot": "true"}, schema)
    assert value == {"days": 3, "hot": True}
    assert {"path": "/days", "from": "3", "to": 3} in coercions
    assert len(violations) == 1 and "city" in violations[0]["message"]
    assert toolscope.coerce({"days": 3}, {"type": "object"}) == ({"days": 3}, [], [])


@pytest.mark.parametrize(
    "call",
    [
        lambda: toolscope.parse("x", "no-such-protocol"),
        lambda: toolscope.StreamParser("no-such-protocol"),
        lambda: toolscope.parse("x", "hermes", "[{"),
        lambda: toolscope.parse("x", "hermes", [{"description": "a tool without a name"}]),
        lambda: toolscope.render_tools("hermes", "not json"),
        lambda: toolscope.detect("x", "{"),
    ],
)
def test_bad_input_raises_a_clear_error(call):
    with pytest.raises(toolscope.ToolscopeError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert str(e.value) and "panicked" not in str(e.value)


def test_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        toolscope.parse(42, "hermes")
    with pytest.raises(TypeError):
        toolscope.StreamParser("hermes").feed(["a list"])


@pytest.mark.parametrize("name", NAMES)
def test_garbage_never_raises(name):
    rng = random.Random(name)
    alphabet = [b"<", b">", b"{", b"}", b"[", b"]", b'"', b"\n", b"|", b"\xff", b"\xe2\x82", b"a"]
    for _ in range(20):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        whole = toolscope.parse(data, name, TOOLS)
        assert isinstance(whole, list)
        collapse_stream(stream(name, data, rng.randint(1, 9)))


def test_threads_parse_at_once():
    data = example("qwen3-coder") * 200
    want = toolscope.parse(data, "qwen3-coder", TOOLS)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(toolscope.parse(data, "qwen3-coder", TOOLS)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4
