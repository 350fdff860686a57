"""A stdio MCP server that misbehaves on purpose, for tests/mcp_hostile.rs. It speaks JSON-RPC by
hand (no SDK), so that it can write what no SDK would: a line over the client's limit, a cut
line, a line that is not JSON, a malformed tool in `tools/list`, or no answer at all.

Flags:
  --exit-at-start STATUS   write two lines on stderr and exit with STATUS before reading anything
  --exit-on-initialize S   read `initialize`, write a line on stderr and exit with S unanswered
  --bad-tools              list malformed tools between good ones
  --banner                 write a line that is not JSON on stdout before anything else
  --flood-size N           the size of `flood`'s text (2 MiB by default), for measuring
  --pid-file PATH          write this process's id to PATH at start
  --hang-on-initialize     read `initialize`, then hang without reading or answering anything
                           (a closed stdin does not end it: only a signal does)

Tools (`tools/call`):
  echo {text}              answers the text
  huge {size}              answers a text of `size` bytes, on one line, well formed
  flood                    answers a text of 2 MiB (`huge` for a model that fills no size)
  cut                      answers with a line cut in the middle of the JSON
  noise {text}             writes a line that is not JSON, then answers the text
  garbled                  answers with a line that starts as JSON and has no readable id
"""

import json
import os
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


GOOD_TOOLS = [
    {
        "name": "echo",
        "description": "Answers its text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "flood",
        "description": "Answers 2 MiB of text.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "huge",
        "description": "Answers a text of the size asked for.",
        "inputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer"}},
            "required": ["size"],
        },
    },
]

BAD_TOOLS = [
    # No name at all: nothing could call it.
    {"description": "a tool without a name", "inputSchema": {"type": "object"}},
    # A name that is not a string, and a schema that is not an object.
    {"name": 42, "inputSchema": "nothing"},
]


def main(argv):
    args = argv[1:]
    if "--exit-at-start" in args:
        status = int(args[args.index("--exit-at-start") + 1])
        print("hostile: loading the configuration", file=sys.stderr, flush=True)
        print("hostile: error: HOSTILE_API_KEY is not set", file=sys.stderr, flush=True)
        sys.exit(status)
    if "--pid-file" in args:
        path = args[args.index("--pid-file") + 1]
        with open(path + ".part", "w") as f:
            f.write(str(os.getpid()))
        os.replace(path + ".part", path)
    hang_on_init = "--hang-on-initialize" in args
    exit_on_init = None
    if "--exit-on-initialize" in args:
        exit_on_init = int(args[args.index("--exit-on-initialize") + 1])
    bad_tools = "--bad-tools" in args
    flood_size = 2 * 1024 * 1024
    if "--flood-size" in args:
        flood_size = int(args[args.index("--flood-size") + 1])
    if "--banner" in args:
        raw("hostile server 1.0 starting (this line is not JSON-RPC)")
    print("hostile: serving on stdio", file=sys.stderr, flush=True)

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        method = message.get("method")
        mid = message.get("id")
        if mid is None:
            continue  # a notification
        if method == "initialize":
            if hang_on_init:
                while True:
                    time.sleep(3600)
            if exit_on_init is not None:
                print("hostile: refusing to initialize", file=sys.stderr, flush=True)
                sys.exit(exit_on_init)
            send({
                "jsonrpc": "2.0",
                "id": mid,
                "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1.0"},
                },
            })
        elif method == "tools/list":
            tools = list(GOOD_TOOLS)
            if bad_tools:
                tools = [GOOD_TOOLS[0]] + BAD_TOOLS + GOOD_TOOLS[1:]
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        elif method == "tools/call":
            name = message["params"]["name"]
            arguments = message["params"].get("arguments") or {}
            if name == "echo":
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(arguments["text"])})
            elif name in ("huge", "flood"):
                text = "x" * int(arguments.get("size", flood_size))
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(text)})
            elif name == "cut":
                raw('{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "unfinis'
                    % json.dumps(mid))
            elif name == "noise":
                raw("progress: 50% (this line is not JSON-RPC)")
                send({"jsonrpc": "2.0", "id": mid, "result": text_result(arguments["text"])})
            elif name == "garbled":
                raw('{"jsonrpc": "2.0", "result" oops')
            else:
                send({
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32602, "message": "no tool named %s" % name},
                })
        else:
            send({
                "jsonrpc": "2.0",
                "id": mid,
                "error": {"code": -32601, "message": "unknown method %s" % method},
            })


if __name__ == "__main__":
    main(sys.argv)
