#!/usr/bin/env bash
# Checks that a graph built with reused per-file parse results (`export --reuse`) is
# the graph of a fresh build, on real commits, and measures what reuse saves.
#
# Usage: check-incremental.sh GIT_DIR COMMIT [COMMIT...]
#   GIT_DIR  a (bare) git repository holding the commits, e.g. a mirror.
#   COMMIT   two or more commits, built in this order: each is exported fresh, then
#            with --reuse on a store that holds the previous commits' parse results.
# Environment:
#   CARGO_TARGET_DIR  where to build (default $HOME/.cache/navbench-target)
#   PROFILE           cargo profile to build and run: release (default) or dev
#   KEEP=1            keep the temporary directory (trees, outputs, logs)
#
# Prints one row per commit: .py files parsed and reused by the --reuse build, the
# build time of the fresh and of the --reuse build (from the same run), and the
# number of differing lines between their node and edge tables. Exits 1 if any
# table differs.
set -euo pipefail

git_dir=${1:?usage: check-incremental.sh GIT_DIR COMMIT [COMMIT...]}
shift
[[ $# -ge 2 ]] || { echo "give at least two commits" >&2; exit 2; }
profile=${PROFILE:-release}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/navbench-target}
here=$(cd "$(dirname "$0")/.." && pwd)

(cd "$here" && cargo build --quiet --profile "$profile" -p navbench-codegraph)
outdir=$([[ $profile == dev ]] && echo debug || echo "$profile")
bin="$CARGO_TARGET_DIR/$outdir/navbench-codegraph"

tmp=$(mktemp -d /tmp/codegraph-incremental-XXXXXX)
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "keeping $tmp" >&2; fi

field() { sed -n "s/.*$1=\"\\{0,1\\}\\([0-9.]*\\).*/\\1/p" "$2" | tail -1; }

status=0
printf '%-12s %7s %7s %9s %9s %7s %9s %9s\n' commit parsed reused fresh_ms reuse_ms ratio node_diff edge_diff
for commit in "$@"; do
  short=${commit:0:12}
  tree="$tmp/trees/$short"
  mkdir -p "$tree"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
  NO_COLOR=1 "$bin" export --root "$tree" --out "$tmp/$short.fresh" 2>"$tmp/$short.fresh.log" \
    || { cat "$tmp/$short.fresh.log" >&2; exit 2; }
  NO_COLOR=1 "$bin" export --root "$tree" --out "$tmp/$short.reuse" --reuse "$tmp/store" 2>"$tmp/$short.reuse.log" \
    || { cat "$tmp/$short.reuse.log" >&2; exit 2; }
  fresh_ms=$(field build_ms "$tmp/$short.fresh.log")
  reuse_ms=$(field build_ms "$tmp/$short.reuse.log")
  nd=$(diff "$tmp/$short.fresh.nodes.tsv" "$tmp/$short.reuse.nodes.tsv" | grep -c '^[<>]' || true)
  ed=$(diff "$tmp/$short.fresh.edges.tsv" "$tmp/$short.reuse.edges.tsv" | grep -c '^[<>]' || true)
  printf '%-12s %7s %7s %9s %9s %7s %9s %9s\n' "$short" \
    "$(field parsed "$tmp/$short.reuse.log")" "$(field reused "$tmp/$short.reuse.log")" \
    "$fresh_ms" "$reuse_ms" "$(awk -v f="$fresh_ms" -v r="$reuse_ms" 'BEGIN { if (r > 0) printf "%.1fx", f / r }')" \
    "$nd" "$ed"
  [[ $nd == 0 && $ed == 0 ]] || status=1
  rm -rf "$tree"
done
exit $status
