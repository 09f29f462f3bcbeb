#!/usr/bin/env bash
# Checks the BM25 content search against the original LocAgent's outputs in
# ../shared/ (beside the clone): reference/locagent-bm25/ (EpicSplitter chunks and bm25s top-10 results).
#
# Usage: check-bm25.sh MIRROR_DIR [REFERENCE_DIR] [DATASET_JSONL]
#   MIRROR_DIR     holds the bare git mirrors psf+requests/repo and pallets+flask/repo
#                  (a directory of bare mirrors).
#   REFERENCE_DIR  defaults to ../shared/ beside the clone: reference/locagent-bm25.
#   DATASET_JSONL  problem statements; defaults to ../shared/ beside the clone: datasets/swe-bench-lite-dev.jsonl.
# Environment:
#   CARGO_TARGET_DIR  where to build (default $HOME/.cache/navbench-target)
#   PROFILE           cargo profile: dev (default; dependencies are optimized) or release
#   KEEP=1            keep the temporary directory (the archived trees)
#
# It archives each reference commit into a temporary directory (no dot-directory in the
# path, as the reference was made) and runs `examples/bm25_check.rs check`, which prints
# per repository: chunk agreement (boundaries, and full identity: path, lines, token
# count, text length, span ids) and top-10 agreement per query set, counting a position
# as agreeing when the chunk is the original's or ties with it (same score within 1e-6
# relative; the original orders ties arbitrarily and pads with zero-score chunks).
# Exits 1 unless all chunks match and problem-statement agreement is >= 95% per repo.
set -euo pipefail

mirror=${1:?usage: check-bm25.sh MIRROR_DIR [REFERENCE_DIR] [DATASET_JSONL]}
ref=${2:-$(cd "$(dirname "$0")/../../.." && pwd)/../shared/reference/locagent-bm25}
dataset=${3:-$(cd "$(dirname "$0")/../../.." && pwd)/../shared/datasets/swe-bench-lite-dev.jsonl}
profile=${PROFILE:-dev}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/navbench-target}
here=$(cd "$(dirname "$0")/.." && pwd)

repos=(
  "requests psf+requests 091991be0da19de9108dbe5e3752917fea3d7fdc"
  "flask pallets+flask 182ce3dd15dfa3537391c3efaf9c3ff407d134d4"
)
for r in "${repos[@]}"; do
  set -- $r
  [[ -d "$mirror/$2/repo" ]] || { echo "missing mirror $mirror/$2/repo" >&2; exit 2; }
  [[ -f "$ref/$1.json" ]] || { echo "missing reference $ref/$1.json" >&2; exit 2; }
done
[[ -f "$dataset" ]] || { echo "missing dataset $dataset" >&2; exit 2; }

(cd "$here" && cargo build --quiet --profile "$profile" -p navbench-codegraph --example bm25_check)
outdir=$([[ $profile == dev ]] && echo debug || echo "$profile")
bin="$CARGO_TARGET_DIR/$outdir/examples/bm25_check"

tmp=$(mktemp -d /tmp/codegraph-bm25-XXXXXX)
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "keeping $tmp" >&2; fi
for r in "${repos[@]}"; do
  set -- $r
  mkdir -p "$tmp/$1"
  git --git-dir="$mirror/$2/repo" archive "$3" | tar -x -C "$tmp/$1"
done
"$bin" check "$tmp/requests" "$tmp/flask" "$ref" "$dataset"
