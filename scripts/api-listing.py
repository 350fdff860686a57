#!/usr/bin/env python3
"""The public API of toolscope-core, one item per line, from rustdoc's JSON output.

    scripts/api-listing.py            # writes crates/toolscope-core/api.txt
    scripts/api-listing.py --check    # fails, with a diff, when the API differs from api.txt

A change to the crate's public surface (an item added, removed, renamed, or a signature changed)
changes this listing, so it shows in review as a diff of api.txt; CI runs --check. The JSON comes
from `cargo rustdoc -p toolscope-core --all-features -- -Z unstable-options --output-format json`
(RUSTC_BOOTSTRAP=1 lets a stable toolchain write it).

Listed: every public module, struct (with its public fields), enum (with its variants), trait
(with its items), function and method (with its signature), constant, static, type alias and
macro reachable from the crate root, and the traits each type implements (blanket and auto
implementations left out).
"""

import difflib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LISTING = os.path.join(ROOT, "crates", "toolscope-core", "api.txt")


def rustdoc_json():
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    subprocess.run(
        ["cargo", "rustdoc", "-q", "-p", "toolscope-core", "--all-features", "--",
         "-Z", "unstable-options", "--output-format", "json"],
        cwd=ROOT, env=env, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    with open(os.path.join(target, "doc", "toolscope_core.json"), encoding="utf-8") as f:
        return json.load(f)


class Listing:
    def __init__(self, doc):
        self.index = doc["index"]
        self.paths = doc["paths"]
        self.lines = set()
        self.seen = set()

    # Types, as written in Rust.
    def ty(self, t):
        if t is None:
            return "()"
        (kind, v), = t.items()
        if kind == "primitive":
            return v
        if kind == "generic":
            return v
        if kind == "resolved_path":
            return self.path_name(v) + self.args(v.get("args"))
        if kind == "borrowed_ref":
            life = (v["lifetime"] + " ") if v.get("lifetime") else ""
            return "&" + life + ("mut " if v["is_mutable"] else "") + self.ty(v["type"])
        if kind == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(v["type"])
        if kind == "slice":
            return "[" + self.ty(v) + "]"
        if kind == "array":
            return "[" + self.ty(v["type"]) + "; " + v["len"] + "]"
        if kind == "tuple":
            inner = ", ".join(self.ty(x) for x in v)
            return "(" + inner + ("," if len(v) == 1 else "") + ")"
        if kind == "impl_trait":
            return "impl " + " + ".join(self.bound(b) for b in v)
        if kind == "dyn_trait":
            traits = [self.path_name(p["trait"]) + self.args(p["trait"].get("args"))
                      for p in v["traits"]]
            if v.get("lifetime"):
                traits.append(v["lifetime"])
            return "dyn " + " + ".join(traits)
        if kind == "qualified_path":
            trait = v.get("trait")
            self_ty = self.ty(v["self_type"])
            if trait:
                return "<" + self_ty + " as " + self.path_name(trait) + ">::" + v["name"]
            return self_ty + "::" + v["name"]
        if kind == "function_pointer":
            sig = v["sig"]
            ins = ", ".join(self.ty(x[1]) for x in sig["inputs"])
            out = sig.get("output")
            return "fn(" + ins + ")" + (" -> " + self.ty(out) if out else "")
        if kind == "infer":
            return "_"
        return kind

    def path_name(self, p):
        item = self.paths.get(str(p.get("id")))
        if item and item.get("crate_id") == 0:
            return "::".join(item["path"][1:])
        return p["path"].split("::")[-1]

    def args(self, a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            parts = []
            for x in a["angle_bracketed"]["args"]:
                (k, v), = x.items()
                parts.append(v if k == "lifetime" else self.ty(v) if k == "type" else str(v))
            for c in a["angle_bracketed"].get("constraints", []):
                b = c.get("binding", {})
                if "equality" in b:
                    parts.append(c["name"] + " = " + self.ty(b["equality"].get("type")))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            out = p.get("output")
            return "(" + ", ".join(self.ty(x) for x in p["inputs"]) + ")" + (
                " -> " + self.ty(out) if out else "")
        return ""

    def bound(self, b):
        if "trait_bound" in b:
            t = b["trait_bound"]["trait"]
            return self.path_name(t) + self.args(t.get("args"))
        if "outlives" in b:
            return b["outlives"]
        return "?"

    def generics(self, g):
        params = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "lifetime" in kind:
                params.append(p["name"])
            elif "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                bounds = kind["type"].get("bounds", [])
                params.append(p["name"] + (": " + " + ".join(self.bound(b) for b in bounds)
                                           if bounds else ""))
            elif "const" in kind:
                params.append("const " + p["name"] + ": " + self.ty(kind["const"]["type"]))
        return "<" + ", ".join(params) + ">" if params else ""

    def signature(self, name, f):
        sig = f["sig"]
        h = f["header"]
        quals = ("const " if h["is_const"] else "") + ("async " if h["is_async"] else "") + (
            "unsafe " if h["is_unsafe"] else "")
        ins = []
        for arg_name, t in sig["inputs"]:
            if arg_name == "self":
                ins.append(self.ty(t).replace("&Self", "&self").replace("&mut Self", "&mut self")
                           if t != {"generic": "Self"} else "self")
            else:
                ins.append(self.ty(t))
        out = sig.get("output")
        return (quals + "fn " + name + self.generics(f["generics"]) + "(" + ", ".join(ins) + ")"
                + (" -> " + self.ty(out) if out else ""))

    # The walk.
    def add(self, line):
        self.lines.add(line)

    def item(self, id_, path):
        item = self.index.get(str(id_))
        if item is None:
            return
        (kind, v), = item["inner"].items()
        name = item.get("name")
        here = path + "::" + name if name else path
        key = (id_, here)
        if key in self.seen:
            return
        self.seen.add(key)
        if kind == "module":
            self.add("mod " + here)
            for child in v["items"]:
                child_item = self.index.get(str(child))
                if child_item and child_item["visibility"] == "public":
                    self.item(child, here)
        elif kind == "use":
            target = self.index.get(str(v["id"])) if v.get("id") is not None else None
            if target is None:
                self.add("use " + path + "::" + v["name"] + " = " + v["source"])
            elif v["is_glob"]:
                for child in target["inner"].get("module", {}).get("items", []):
                    child_item = self.index.get(str(child))
                    if child_item and child_item["visibility"] == "public":
                        self.item(child, path)
            else:
                renamed = dict(target, name=v["name"])
                self.index[str(v["id"]) + ":" + here] = renamed
                self.item(str(v["id"]) + ":" + here, path)
        elif kind == "struct":
            self.add("struct " + here + self.generics(v["generics"]))
            k = v["kind"]
            fields = k.get("plain", {}).get("fields", []) if isinstance(k, dict) else []
            if isinstance(k, dict) and "tuple" in k:
                tys = [self.ty(self.index[str(x)]["inner"]["struct_field"]) if x is not None
                       else "_" for x in k["tuple"]]
                self.add("struct " + here + "(" + ", ".join(tys) + ")")
            for fid in fields:
                fi = self.index[str(fid)]
                if fi["visibility"] == "public":
                    self.add("field " + here + "." + fi["name"] + ": "
                             + self.ty(fi["inner"]["struct_field"]))
            self.impls(v["impls"], here)
        elif kind == "enum":
            self.add("enum " + here + self.generics(v["generics"]))
            for vid in v["variants"]:
                vi = self.index[str(vid)]
                vk = vi["inner"]["variant"]["kind"]
                shape = ""
                if isinstance(vk, dict) and "tuple" in vk:
                    shape = "(" + ", ".join(
                        self.ty(self.index[str(x)]["inner"]["struct_field"]) if x is not None
                        else "_" for x in vk["tuple"]) + ")"
                elif isinstance(vk, dict) and "struct" in vk:
                    shape = " { " + ", ".join(
                        self.index[str(x)]["name"] + ": "
                        + self.ty(self.index[str(x)]["inner"]["struct_field"])
                        for x in vk["struct"]["fields"]) + " }"
                self.add("variant " + here + "::" + vi["name"] + shape)
            self.impls(v["impls"], here)
        elif kind == "trait":
            self.add("trait " + here + self.generics(v["generics"]))
            for tid in v["items"]:
                ti = self.index[str(tid)]
                (tk, tv), = ti["inner"].items()
                if tk == "function":
                    self.add("trait-fn " + here + "::" + self.signature(ti["name"], tv))
                else:
                    self.add("trait-" + tk + " " + here + "::" + ti["name"])
        elif kind == "function":
            self.add("fn " + path + "::" + self.signature(name, v))
        elif kind == "constant":
            self.add("const " + here + ": " + self.ty(v["type"]))
        elif kind == "static":
            self.add("static " + here + ": " + self.ty(v["type"]))
        elif kind == "type_alias":
            self.add("type " + here + " = " + self.ty(v["type"]))
        elif kind in ("macro", "proc_macro"):
            self.add("macro " + here)
        else:
            self.add(kind + " " + here)

    def impls(self, ids, here):
        for iid in ids:
            imp = self.index[str(iid)]["inner"]["impl"]
            if imp.get("is_synthetic") or imp.get("blanket_impl") is not None:
                continue
            trait = imp.get("trait")
            if trait is not None:
                self.add("impl " + here + ": " + self.path_name(trait) + self.args(trait.get("args")))
                continue
            for mid in imp["items"]:
                mi = self.index[str(mid)]
                if mi["visibility"] != "public":
                    continue
                (mk, mv), = mi["inner"].items()
                if mk == "function":
                    self.add("method " + here + "::" + self.signature(mi["name"], mv))
                elif mk == "assoc_const":
                    self.add("assoc-const " + here + "::" + mi["name"] + ": " + self.ty(mv["type"]))
                else:
                    self.add(mk + " " + here + "::" + mi["name"])


def main():
    doc = rustdoc_json()
    listing = Listing(doc)
    root = doc["index"][str(doc["root"])]
    for child in root["inner"]["module"]["items"]:
        item = doc["index"].get(str(child))
        if item and item["visibility"] == "public":
            listing.item(child, "toolscope_core")
    text = "".join(line + "\n" for line in sorted(listing.lines))
    if "--check" in sys.argv:
        with open(LISTING, encoding="utf-8") as f:
            old = f.read()
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), "api.txt (committed)",
                "api.txt (this build)"))
            print("\nThe public API of toolscope-core changed. If that is meant, run "
                  "scripts/api-listing.py and commit crates/toolscope-core/api.txt.",
                  file=sys.stderr)
            return 1
        print(f"the public API matches api.txt ({text.count(chr(10))} items)")
        return 0
    with open(LISTING, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {LISTING} ({text.count(chr(10))} items)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
