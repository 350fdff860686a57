#!/usr/bin/env python3
"""Hostile input against the real binary, and a table of what was tried and what was handled.

Providers: every provider `toolscope run --help` lists (its list comes from the provider table)
against a loopback server started here, in each of these cases: 401 (the body echoes the key),
403, 404, 429, 500, 503, connection refused, a stream cut mid-chunk, garbage events, an HTML page,
a 307 redirect to another port, a server that hangs after the headers (run with a 2 s idle
timeout; `run` has no overall deadline), and an event over the event limit (a 3 MiB line with
--max-event-mib 1). Handled means: no panic, exit status 1 (the provider or the stream failed),
the last line an `error` part of the expected category, the key never in stdout or stderr, and
for the redirect, the other port never contacted.

Protocols: every protocol `toolscope protocols` lists, `parse` whole and `parse --stream` at
7-byte chunks, on random bytes (64 KiB), a huge input (10 MiB of text sprinkled with the
protocol's own markers from a demo answer), and a cut answer (the demo model's call in that
protocol, cut at a third and at two thirds). Handled means: no panic, exit 0, at least one part
printed, every line JSON.

Only 127.0.0.1 servers this script starts; no network. Python 3.11 standard library only.

Usage: scripts/fault-injection.py [--bin target/debug/toolscope] [--only providers|protocols]
       [--verbose]
"""
import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-fault-injection-SECRET-4242"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# provider case -> the category its error part must have
PROVIDER_CASES = {
    "401": "provider_authentication",
    "403": "provider_authentication",
    "404": "provider_invalid_request",
    "429": "provider_rate_limit",
    "500": "provider_unavailable",
    "503": "provider_unavailable",
    "refused": "provider_unavailable",
    "cut": "provider_unavailable",
    "garbage": "provider_invalid_response",
    "html": "provider_invalid_response",
    "redirect": "provider_unavailable",
    "hang": "provider_unavailable",
    "oversize": "provider_invalid_response",
}


class Hits:
    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0

    def add(self):
        with self.lock:
            self.count += 1


def make_handler(elsewhere_url, hang_release):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def _key(self):
            for h in ("authorization", "x-api-key", "x-goog-api-key"):
                v = self.headers.get(h)
                if v:
                    return v
            return ""

        def _json(self, status, obj, extra=()):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            for k, v in extra:
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _head(self, ctype, chunked=True):
            self.send_response(200)
            self.send_header("content-type", ctype)
            if chunked:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("connection", "close")
            self.end_headers()

        def _chunk(self, data):
            self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
            self.wfile.flush()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", "0") or 0))
            case = self.path.strip("/").split("/")[0]
            try:
                self.answer(case)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def answer(self, case):
            if case == "401":
                self._json(401, {"error": {"type": "authentication_error", "message": f"invalid key {self._key()}"}})
            elif case == "403":
                self._json(403, {"error": {"message": "forbidden"}})
            elif case == "404":
                self._json(404, {"error": {"message": "no such route"}})
            elif case == "429":
                self._json(429, {"error": {"type": "rate_limit_error", "message": "slow down"}},
                           [("retry-after", "Wed, 21 Oct 2037 07:28:00 GMT")])
            elif case == "500":
                self._json(500, {"error": {"message": "boom"}})
            elif case == "503":
                self._json(503, {"error": {"message": "overloaded"}})
            elif case == "cut":
                self._head("text/event-stream")
                # A chunk that promises 64 bytes and delivers 10, then the connection closes.
                self.wfile.write(b"40\r\ndata: {\"ch")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            elif case == "garbage":
                self._head("text/event-stream")
                rnd = random.Random(7)
                junk = bytes(rnd.randrange(1, 256) for _ in range(2000)).replace(b"\n", b"?").replace(b"\r", b"?")
                self._chunk(b"data: " + junk + b"\n\n")
                self._chunk(b"")
            elif case == "html":
                body = b"<!DOCTYPE html><html><head><title>Captive portal</title></head><body>Please sign in</body></html>\n"
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif case == "redirect":
                self.send_response(307)
                self.send_header("location", elsewhere_url + "/stolen")
                self.send_header("content-length", "0")
                self.end_headers()
            elif case == "hang":
                self._head("text/event-stream")
                hang_release.wait(30)
            elif case == "oversize":
                self._head("text/event-stream")
                self._chunk(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"")
                block = b"x" * (256 << 10)
                for _ in range(12):  # 3 MiB, no line end
                    self._chunk(block)
                self._chunk(b"\"}}]}\n\n")
                self._chunk(b"")
            else:
                self._json(500, {"error": {"message": f"unknown case {case}"}})

    return Handler


def start(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def refused_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(cmd, env=None, stdin=None, timeout=120):
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.monotonic() - t


def panicked(code, err):
    return code == 101 or b"panicked" in err


def providers(binary):
    help_text = subprocess.run([binary, "run", "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--provider <PROVIDER>.*?\[possible values: ([^\]]+)\]", help_text, re.S)
    return [p.strip() for p in m.group(1).split(",")]


def provider_cases(binary, verbose):
    env = dict(os.environ)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        env[var] = KEY
    hits = Hits()

    class Elsewhere(BaseHTTPRequestHandler):
        def do_POST(self):
            hits.add()
            self.send_response(500)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass

    elsewhere = start(Elsewhere)
    release = threading.Event()
    server = start(make_handler(f"http://127.0.0.1:{elsewhere.server_address[1]}", release))
    base = f"http://127.0.0.1:{server.server_address[1]}"
    rows = []
    for provider in providers(binary):
        for case, want in PROVIDER_CASES.items():
            url = f"http://127.0.0.1:{refused_port()}/x" if case == "refused" else f"{base}/{case}"
            before = hits.count
            cmd = [binary, "run", "--provider", provider, "--model", "m", "--base-url", url,
                   "--connect-timeout", "2", "--idle-timeout", "2"]
            if case == "oversize":
                cmd += ["--max-event-mib", "1"]
            code, out, err, secs = run(cmd + ["Weather in Paris?"], env=env)
            lines = [l for l in out.decode("utf-8", "replace").split("\n") if l.strip()]
            last = {}
            try:
                last = json.loads(lines[-1]) if lines else {}
            except json.JSONDecodeError:
                pass
            problems = []
            if code is None:
                problems.append("did not end within 120 s")
            if panicked(code, err):
                problems.append("panicked")
            if code not in (None, 1):
                problems.append(f"exit {code}")
            if last.get("type") != "error":
                problems.append(f"last line not an error part: {lines[-1][:120] if lines else '(none)'}")
            elif last.get("category") != want:
                problems.append(f"category {last.get('category')}, expected {want}: {last.get('message', '')[:160]}")
            if KEY.encode() in out or KEY.encode() in err:
                problems.append("the key was printed")
            if case == "redirect" and hits.count != before:
                problems.append("the other origin was contacted")
            if case == "oversize" and len(last.get("message", "")) > 8192:
                problems.append(f"the error quotes {len(last['message'])} bytes")
            rows.append(("provider", provider, case, not problems, problems, secs))
            if verbose or problems:
                status = "ok" if not problems else "FAIL " + "; ".join(problems)
                print(f"  {provider:18} {case:9} {secs:5.1f}s {status}", file=sys.stderr)
    release.set()
    server.shutdown()
    elsewhere.shutdown()
    return rows


def demo_answer(binary, protocol, tools_path):
    """The demo model's answer text for a forced call, written in `protocol`."""
    code, out, err, _ = run([binary, "run", "--provider", "demo", "--protocol", protocol, "--tools", tools_path,
                             "--tool-choice", "auto", "--raw", "What is the weather in Paris?"], timeout=60)
    text = []
    for line in out.decode("utf-8", "replace").split("\n"):
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") != "raw":
            continue
        try:
            chunk = json.loads(ev["data"])
        except (json.JSONDecodeError, TypeError):
            continue
        for c in chunk.get("choices") or []:
            delta = c.get("delta") or {}
            for k in ("reasoning_content", "content"):
                if isinstance(delta.get(k), str):
                    text.append(delta[k])
    return "".join(text)


def protocol_cases(binary, verbose):
    protocols = [l.split("\t")[0] for l in subprocess.run([binary, "protocols"], capture_output=True, text=True)
                 .stdout.splitlines() if l.strip()]
    tmp = tempfile.mkdtemp(prefix="toolscope-fault-")
    tools_path = os.path.join(tmp, "tools.json")
    with open(tools_path, "w") as f:
        json.dump([{"name": "get_weather", "description": "Weather for a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"]}}], f)
    rnd = random.Random(25)
    random_bytes = bytes(rnd.randrange(256) for _ in range(64 << 10))
    rows = []
    for protocol in protocols:
        answer = demo_answer(binary, protocol, tools_path)
        if not answer:
            answer = "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>"
        sample = answer.encode()
        filler = b"Some plain words between calls. " * 64
        huge = (sample + filler) * ((10 << 20) // (len(sample) + len(filler)) + 1)
        huge = huge[: 10 << 20]
        inputs = {
            "random": random_bytes,
            "huge": huge,
            "cut": None,
        }
        for case, data in inputs.items():
            datas = [sample[: len(sample) // 3], sample[: 2 * len(sample) // 3]] if case == "cut" else [data]
            for mode in ("whole", "stream"):
                problems = []
                secs_all = 0.0
                for d in datas:
                    cmd = [binary, "parse", "--protocol", protocol, "--tools", tools_path]
                    if mode == "stream":
                        cmd += ["--stream", "--chunk-size", "7" if case != "huge" else "4096"]
                    code, out, err, secs = run(cmd + ["-"], stdin=d)
                    secs_all += secs
                    # JSONL lines end with \n only (a part's text may hold U+2028 and the like).
                    lines = [l for l in out.decode("utf-8", "replace").split("\n") if l.strip()]
                    if code is None:
                        problems.append("did not end within 120 s")
                    if panicked(code, err):
                        problems.append("panicked")
                    if code not in (None, 0):
                        problems.append(f"exit {code}: {err.decode('utf-8', 'replace')[:160]}")
                    if not lines and d:
                        problems.append("no part printed")
                    for l in lines[:1000] + lines[-1000:]:
                        try:
                            json.loads(l)
                        except json.JSONDecodeError:
                            problems.append(f"not JSON: {l[:80]}")
                            break
                rows.append(("protocol", protocol, f"{case}/{mode}", not problems, problems, secs_all))
                if verbose or problems:
                    status = "ok" if not problems else "FAIL " + "; ".join(problems)
                    print(f"  {protocol:18} {case + '/' + mode:14} {secs_all:5.1f}s {status}", file=sys.stderr)
    return rows


def table(rows):
    by = {}
    for kind, _, case, ok, _, _ in rows:
        key = (kind, case)
        tried, handled = by.get(key, (0, 0))
        by[key] = (tried + 1, handled + int(ok))
    print(f"{'kind':9} {'case':16} {'tried':>6} {'handled':>8}")
    for (kind, case), (tried, handled) in by.items():
        print(f"{kind:9} {case:16} {tried:6} {handled:8}")
    tried = len(rows)
    handled = sum(1 for r in rows if r[3])
    print(f"{'all':9} {'':16} {tried:6} {handled:8}")
    return tried == handled


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/toolscope"))
    ap.add_argument("--only", choices=["providers", "protocols"])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    binary = args.bin
    if not os.path.exists(binary):
        binary = os.path.join(ROOT, "target/debug/toolscope")
    rows = []
    if args.only in (None, "providers"):
        rows += provider_cases(binary, args.verbose)
    if args.only in (None, "protocols"):
        rows += protocol_cases(binary, args.verbose)
    sys.exit(0 if table(rows) else 1)


if __name__ == "__main__":
    main()
