#!/usr/bin/env bash
# Writes o200k_base.tiktoken (the vocabulary openai-harmony loads) into DIR without reaching
# its download address: the same ranks ship in the npm package js-tiktoken, in a compressed
# form this turns back into the .tiktoken file, checked against the file's published SHA-256.
#
#   crates/toolscope-py/bench/o200k_from_npm.sh DIR
#   TIKTOKEN_ENCODINGS_BASE=DIR python crates/toolscope-py/bench/stream_bench.py --harmony
set -euo pipefail
dir=${1:?give the directory to write o200k_base.tiktoken into}
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent js-tiktoken@1 >/dev/null && tar xzf js-tiktoken-*.tgz)
node -e '
const r = require(process.argv[1]);
const ranks = (r.default || r).bpe_ranks;
const out = [];
for (const line of ranks.split("\n").filter(Boolean)) {
  const [, offset, ...tokens] = line.split(" ");
  tokens.forEach((t, i) => out.push([t, parseInt(offset, 10) + i]));
}
out.sort((a, b) => a[1] - b[1]);
require("fs").writeFileSync(process.argv[2], out.map(([t, n]) => t + " " + n).join("\n") + "\n");
' "$work/package/dist/ranks/o200k_base.cjs" "$dir/o200k_base.tiktoken"
echo "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d  $dir/o200k_base.tiktoken" | sha256sum -c --quiet
echo "wrote $dir/o200k_base.tiktoken"
