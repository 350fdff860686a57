"""Stream-parse the tool-call text of every open-model family.

toolscope reads what a model wrote in its family's own tool-call format (hermes, qwen3-coder,
harmony, mistral, llama, deepseek, kimi, glm, minimax, gemma 4, ...) into parts: reasoning,
text, tool calls with their arguments coerced to the tool's JSON Schema, and errors for what
could not be read. The parser is toolscope-core, in Rust: any chunking of the output gives the
same parts as the whole, and nothing the model wrote is dropped without a part saying so.

Parts are dicts in the AI SDK's stream-part vocabulary, the same JSON the ``toolscope`` command
line prints: ``{"type": "tool-call", "toolCallId": ..., "toolName": ..., "input": {...}}``.

    >>> import toolscope
    >>> tools = [{"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}}}]
    >>> text = '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
    >>> [p["input"] for p in toolscope.parse(text, "hermes", tools) if p["type"] == "tool-call"]
    [{'city': 'Paris'}]
"""

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _toolscope

__version__ = _toolscope.__version__

__all__ = [
    "protocols",
    "detect",
    "parse",
    "StreamParser",
    "coerce",
    "render_tools",
    "ToolscopeError",
]

Part = Dict[str, Any]
Tools = Union[str, Sequence[Dict[str, Any]], Dict[str, Any], None]


class ToolscopeError(ValueError):
    """Bad input: an unknown protocol, tools that are not valid definitions, a schema or
    arguments that are not JSON. The message is toolscope's own."""


def _call(f, *args):
    try:
        return f(*args)
    except ValueError as e:
        raise ToolscopeError(str(e)) from None


def _tools_json(tools: Tools) -> Optional[str]:
    if tools is None:
        return None
    if isinstance(tools, str):
        return tools
    return json.dumps(tools)


def _bytes(text: Union[str, bytes, bytearray, memoryview]) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"expected str or bytes, not {type(text).__name__}")


def protocols() -> List[Dict[str, Any]]:
    """Every protocol toolscope reads, in registry order: ``name``, ``aliases``, the model
    ``families`` it serves, its ``reasoning`` markers (or None) and ``reasoningOpen`` (whether
    an output starts inside reasoning)."""
    return json.loads(_toolscope.protocols())


def detect(text: Union[str, bytes], tools: Tools = None) -> Dict[str, str]:
    """Which protocol ``text`` is written in: ``{"protocol": name, "reason": why}``."""
    return json.loads(_call(_toolscope.detect, _bytes(text), _tools_json(tools)))


def parse(
    text: Union[str, bytes],
    protocol: str,
    tools: Tools = None,
    reasoning_open: Optional[bool] = None,
) -> List[Part]:
    """The parts of a whole output: ``reasoning``, ``text``, ``tool-call`` and ``error``.

    ``tools`` are the tool definitions offered (a list of ``{"name", "description",
    "parameters"}`` dicts, or their JSON text): calls to them get their arguments coerced and
    validated. ``reasoning_open`` overrides whether the output starts inside reasoning (the
    protocol's family decides by default)."""
    return json.loads(
        _call(_toolscope.parse, _bytes(text), protocol, _tools_json(tools), reasoning_open)
    )


class StreamParser:
    """Parses an output as it arrives. ``feed`` takes each piece (str or bytes; a piece may end
    inside a character or a marker) and returns the stream parts it completes: ``text-start``,
    ``text-delta``, ``tool-input-start``, ``tool-input-delta``, ``tool-call``, ... ``finish``
    ends the output. The deltas of any chunking add up to the parts of :func:`parse`."""

    def __init__(
        self, protocol: str, tools: Tools = None, reasoning_open: Optional[bool] = None
    ) -> None:
        self._native = _call(
            _toolscope.NativeStreamParser, protocol, _tools_json(tools), reasoning_open
        )

    def feed(self, chunk: Union[str, bytes]) -> List[Part]:
        """The parts this piece completes."""
        return json.loads(_call(self._native.feed, _bytes(chunk)))

    def finish(self) -> List[Part]:
        """The output ended: the parts of what was held back."""
        return json.loads(_call(self._native.finish))

    def reset(self) -> None:
        """Starts a new output with the same protocol and tools."""
        self._native.reset()


def coerce(
    arguments: Any, schema: Dict[str, Any]
) -> Tuple[Any, List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Arguments coerced to a JSON Schema, the way toolscope coerces a call's input:
    ``(value, coercions, violations)``. A coercion is ``{"path", "from", "to"}`` (a JSON
    pointer); a violation ``{"path", "message"}``, of the coerced value."""
    value, coercions, violations = json.loads(
        _call(_toolscope.coerce, json.dumps(arguments), json.dumps(schema))
    )
    return value, coercions, violations


def render_tools(protocol: str, tools: Tools) -> str:
    """The system prompt that offers ``tools`` in the protocol's family's own convention."""
    return _call(_toolscope.render_tools, protocol, _tools_json(tools) or "[]")
