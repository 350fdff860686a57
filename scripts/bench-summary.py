#!/usr/bin/env python3
"""Prints the mean time and throughput of every benchmark criterion saved in target/criterion."""
import json, pathlib

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
rows = []
for est in sorted(root.glob("**/new/estimates.json")):
    bench = est.parent.parent
    meta = json.loads((est.parent / "benchmark.json").read_text())
    mean_ns = json.loads(est.read_text())["mean"]["point_estimate"]
    tp = meta.get("throughput") or {}
    size = tp.get("Bytes") or tp.get("BytesDecimal")
    mbps = f"{size / mean_ns * 1e9 / 1e6:9.1f} MB/s" if size else ""
    rows.append((meta["full_id"], mean_ns / 1e6, mbps))
for name, ms, mbps in rows:
    print(f"{name:44s} {ms:10.2f} ms  {mbps}")
