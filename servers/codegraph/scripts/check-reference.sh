#!/usr/bin/env bash
# Checks that `navbench-codegraph export` reproduces the original LocAgent graphs in
# ../shared/ (beside the clone): reference/locagent-graphs/ line for line (duplicates included).
#
# Usage: check-reference.sh MIRROR_DIR [REFERENCE_DIR]
#   MIRROR_DIR     holds the bare git mirrors psf+requests/repo, pallets+flask/repo and
#                  pytest-dev+pytest/repo (a directory of bare mirrors).
#   REFERENCE_DIR  defaults to ../shared/ beside the clone: reference/locagent-graphs.
# Environment:
#   CARGO_TARGET_DIR  where to build (default $HOME/.cache/navbench-target)
#   PROFILE           cargo profile to build and run: release (default) or dev
#   KEEP=1            keep the temporary directory (trees and outputs) for inspection
#
# For each repository it archives the reference commit into a temporary directory
# (a path with no dot-directory in it, as the reference was made), runs the export,
# diffs both TSV files against the gzipped reference, and prints a table of
# node/edge counts and differing lines. Exits 1 if any file differs.
set -euo pipefail

mirror=${1:?usage: check-reference.sh MIRROR_DIR [REFERENCE_DIR]}
ref=${2:-$(cd "$(dirname "$0")/../../.." && pwd)/../shared/reference/locagent-graphs}
profile=${PROFILE:-release}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/navbench-target}
here=$(cd "$(dirname "$0")/.." && pwd)

repos=(
  "requests psf+requests 091991be0da19de9108dbe5e3752917fea3d7fdc"
  "flask pallets+flask 182ce3dd15dfa3537391c3efaf9c3ff407d134d4"
  "pytest pytest-dev+pytest 2051e30b9b596e944524ccb787ed20f9f5be93e3"
)

for r in "${repos[@]}"; do
  set -- $r
  [[ -d "$mirror/$2/repo" ]] || { echo "missing mirror $mirror/$2/repo" >&2; exit 2; }
  [[ -f "$ref/$1.nodes.tsv.gz" && -f "$ref/$1.edges.tsv.gz" ]] || { echo "missing reference $ref/$1.*.tsv.gz" >&2; exit 2; }
done

(cd "$here" && cargo build --quiet --profile "$profile" -p navbench-codegraph)
outdir=$([[ $profile == dev ]] && echo debug || echo "$profile")
bin="$CARGO_TARGET_DIR/$outdir/navbench-codegraph"

tmp=$(mktemp -d /tmp/codegraph-check-XXXXXX)
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "keeping $tmp" >&2; fi

status=0
printf '%-9s %15s %15s %10s %17s %17s %10s %9s\n' repo nodes_ours nodes_ref node_diff edges_ours edges_ref edge_diff build_ms
for r in "${repos[@]}"; do
  set -- $r
  name=$1 git_dir="$mirror/$2/repo" commit=$3
  mkdir -p "$tmp/trees/$name"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tmp/trees/$name"
  log="$tmp/$name.log"
  NO_COLOR=1 "$bin" export --root "$tmp/trees/$name" --out "$tmp/$name" 2>"$log" || { cat "$log" >&2; exit 2; }
  ms=$(sed -n 's/.*build_ms="\([0-9.]*\)".*/\1/p' "$log")
  nd=$(diff <(zcat "$ref/$name.nodes.tsv.gz") "$tmp/$name.nodes.tsv" | grep -c '^[<>]' || true)
  ed=$(diff <(zcat "$ref/$name.edges.tsv.gz") "$tmp/$name.edges.tsv" | grep -c '^[<>]' || true)
  printf '%-9s %15s %15s %10s %17s %17s %10s %9s\n' "$name" \
    "$(wc -l <"$tmp/$name.nodes.tsv")" "$(zcat "$ref/$name.nodes.tsv.gz" | wc -l)" "$nd" \
    "$(wc -l <"$tmp/$name.edges.tsv")" "$(zcat "$ref/$name.edges.tsv.gz" | wc -l)" "$ed" "$ms"
  if [[ $nd != 0 || $ed != 0 ]]; then
    status=1
    echo "--- first differences for $name (< reference, > ours):"
    diff <(zcat "$ref/$name.nodes.tsv.gz") "$tmp/$name.nodes.tsv" | head -10 || true
    diff <(zcat "$ref/$name.edges.tsv.gz") "$tmp/$name.edges.tsv" | head -10 || true
  fi
done
exit $status
