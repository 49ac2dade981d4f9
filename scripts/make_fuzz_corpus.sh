#!/usr/bin/env bash
# Regenerates the seed part of tests/fuzz/corpus (reproducers of past crashes are kept).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
ninja -C "$build" tests/fuzz/make_corpus
"$build/tests/fuzz/make_corpus" "$root/tests/fuzz/corpus"
ls "$root/tests/fuzz/corpus" | wc -l
