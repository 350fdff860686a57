"""An MCP server written with the official Python SDK (the `mcp` package), which
tests/mcp.rs drives over stdio with toolscope's client: another implementation than the demo
server's, so that the client is not only checked against the SDK it is built on.

Works with `mcp` 2.x (`MCPServer`) and 1.x (`FastMCP`).
"""

import sys

try:
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.server.fastmcp.exceptions import ToolError

server = Server("python-notes")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool()
def big(size: int) -> str:
    """A text of `size` bytes (the SDK sends it twice: as text and as structured content)."""
    return "y" * size


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given (a tool error the model reads)."""
    raise ToolError(f"failed on purpose: {reason}")


if __name__ == "__main__":
    print("python-notes: serving on stdio", file=sys.stderr, flush=True)
    server.run()
