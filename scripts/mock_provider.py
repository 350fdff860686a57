#!/usr/bin/env python3
"""A loopback server that answers every POST with a recorded provider stream, one wire event at a
time at a steady pace, as the provider would. Used by build-sessions.sh to record toolscope
against provider-shaped streams. Prints `listening on http://127.0.0.1:PORT` first."""
import argparse, http.server, socketserver, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--body", required=True, help="the recorded stream (.sse or .ndjson) or body")
ap.add_argument("--content-type", default="text/event-stream")
ap.add_argument("--pace-ms", type=int, default=40)
ap.add_argument("--status", type=int, default=200)
args = ap.parse_args()
body = open(args.body, "rb").read()
if args.body.endswith(".sse"):
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
elif args.body.endswith(".ndjson"):
    events = [l + b"\n" for l in body.split(b"\n") if l.strip()]
else:
    events = [body]

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(args.status)
        self.send_header("content-type", args.content_type)
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            time.sleep(args.pace_ms / 1000)
            self.wfile.write(event)
            self.wfile.flush()

    def log_message(self, *_):
        pass

with socketserver.TCPServer(("127.0.0.1", 0), Handler) as server:
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
