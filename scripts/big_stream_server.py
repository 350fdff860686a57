#!/usr/bin/env python3
"""A loopback server that answers every POST with a huge OpenAI-compatible stream, to measure
toolscope's memory (scripts/memory-2gb.sh). Python 3.11 standard library only. Prints
`listening on http://127.0.0.1:PORT` first.

Modes:
  events  SIZE bytes of answer text as many SSE events of 16 KiB of text each, then the
          connection closes without a finish reason: an answer cut off (toolscope must say so).
  line    one SSE `data:` line of SIZE bytes that never ends: an event over any sane limit.
  ndjson  one Ollama NDJSON line of SIZE bytes.
"""
import argparse, json, socketserver, sys

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=["events", "line", "ndjson"], default="events")
ap.add_argument("--size", type=int, default=2 << 30, help="bytes to stream (default 2 GiB)")
args = ap.parse_args()

PIECE = 16 << 10


def sse_events(size):
    text = ("All work and no play makes a long answer. " * (PIECE // 42 + 1))[:PIECE]
    event = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}) + "\n\n").encode()
    block = event * 64  # about 1 MiB per write
    first = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}) + "\n\n").encode()
    yield first
    sent = 0
    while sent < size:
        yield block
        sent += PIECE * 64


def one_line(size, head):
    yield head
    block = b"x" * (1 << 20)
    sent = 0
    while sent < size:
        yield block
        sent += len(block)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        # Read the request head and its body (content-length), then answer with HTTP/1.0 and
        # close: the body's end is the connection's end.
        length = 0
        while True:
            line = self.rfile.readline()
            if not line or line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        self.rfile.read(length)
        if args.mode == "ndjson":
            ctype, body = "application/x-ndjson", one_line(args.size, b'{"message":{"role":"assistant","content":"')
        elif args.mode == "line":
            ctype, body = "text/event-stream", one_line(args.size, b'data: {"choices":[{"index":0,"delta":{"content":"')
        else:
            ctype, body = "text/event-stream", sse_events(args.size)
        try:
            self.wfile.write(f"HTTP/1.0 200 OK\r\ncontent-type: {ctype}\r\nconnection: close\r\n\r\n".encode())
            for chunk in body:
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what an event limit does


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


with Server(("127.0.0.1", 0), Handler) as server:
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
