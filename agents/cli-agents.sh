#!/usr/bin/env bash
# Installs the agent CLIs that agents/cmd/*.toml run (`navbench run --agent-cmd NAME`),
# from npm, at the versions the named commands and the tests were written against:
#
#   agents/cli-agents.sh install      # once: each CLI in a prefix of its own under the cache
#   agents/cli-agents.sh path         # prints the CLIs' bin directories, PATH-style
#   agents/cli-agents.sh bin NAME     # prints one CLI's executable (claude, codex, gemini)
#
# The prefixes live in $NAVBENCH_CLI_AGENTS (default: <navbench cache>/npm, where the
# cache is $NAVBENCH_CACHE, else $XDG_CACHE_HOME/navbench, else ~/.cache/navbench),
# one directory per package and version, so a rerun finds them and a version bump
# installs beside the old one. Needs node and npm (Claude Code and Codex ship native
# binaries inside their packages; Gemini CLI runs on node >= 20).
#
#   export PATH="$(agents/cli-agents.sh path):$PATH"
set -euo pipefail

cache="${NAVBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/navbench}"
root="${NAVBENCH_CLI_AGENTS:-$cache/npm}"

# Pinned: name, npm package, version, executable.
CLIS=(
  "claude-code @anthropic-ai/claude-code 2.1.332 claude"
  "codex @openai/codex 0.171.0 codex"
  "gemini-cli @google/gemini-cli 0.61.0 gemini"
)

prefix() { echo "$root/$1-$3"; }

install() {
  command -v npm >/dev/null || { echo "cli-agents: npm is missing; install node >= 20 and npm" >&2; exit 1; }
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if (( major < 20 )); then
    echo "cli-agents: node $(node --version 2>/dev/null || echo '(none)') is too old: Gemini CLI needs node >= 20 (Claude Code and Codex ship native binaries)" >&2
    exit 1
  fi
  local line name pkg version exe dir t0
  for line in "${CLIS[@]}"; do
    read -r name pkg version exe <<<"$line"
    dir=$(prefix "$name" "$pkg" "$version")
    if [[ -x "$dir/node_modules/.bin/$exe" ]] && "$dir/node_modules/.bin/$exe" --version >/dev/null 2>&1; then
      continue
    fi
    t0=$(date +%s)
    echo "cli-agents: installing $pkg@$version into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
    "$dir/node_modules/.bin/$exe" --version >/dev/null
    echo "cli-agents: $pkg@$version installed in $(( $(date +%s) - t0 )) s" >&2
  done
}

path() {
  local line name pkg version exe out=""
  for line in "${CLIS[@]}"; do
    read -r name pkg version exe <<<"$line"
    out="${out:+$out:}$(prefix "$name" "$pkg" "$version")/node_modules/.bin"
  done
  echo "$out"
}

bin() {
  local want="$1" line name pkg version exe
  for line in "${CLIS[@]}"; do
    read -r name pkg version exe <<<"$line"
    if [[ "$exe" == "$want" || "$name" == "$want" ]]; then
      echo "$(prefix "$name" "$pkg" "$version")/node_modules/.bin/$exe"
      return 0
    fi
  done
  echo "cli-agents: no CLI named $want (claude, codex, gemini)" >&2
  exit 1
}

case "${1:-}" in
  install) install ;;
  path) path ;;
  bin) bin "${2:?usage: cli-agents.sh bin NAME}" ;;
  *) echo "usage: agents/cli-agents.sh install|path|bin NAME" >&2; exit 2 ;;
esac
