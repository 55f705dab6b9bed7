#!/usr/bin/env bash
# Run every benchmark in one go, from a clean checkout:
#   1. build bench/.venv (with uv; uv itself is pip-installed into it when it is not on PATH),
#   2. install toolpacks (editable, from the repository root) and the peers, unpinned; a peer
#      that fails to install is recorded in bench/results/install.json and left out,
#   3. run bench_core.py, bench_peers.py, bench_discovery.py (if present), bench_startup.py,
#      profile_invoke.py, bench_http.py (in bench/.venv/http: toolpacks[http], fastmcp, locust),
#   4. write docs/benchmarks.md and the figures in bench/README.md (report.py).
#
# Usage: bench/run.sh [--quick] [--fresh]
#   --quick  few, short repeats (a smoke run, one to two minutes)
#   --fresh  delete bench/.venv first
# Environment: PYTHON (the interpreter for the venv; default python3.11, else python3).
# Never part of the test suite's pass/fail.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=""
FRESH=""
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK="--quick" ;;
    --fresh) FRESH=1 ;;
    *) echo "usage: bench/run.sh [--quick] [--fresh]" >&2; exit 2 ;;
  esac
done

VENV=bench/.venv
RESULTS=bench/results
PEERS=(strands-agents pydantic-ai-slim langchain-core openai-agents fastmcp)
PY_BASE=${PYTHON:-$(command -v python3.11 || command -v python3)}
mkdir -p "$RESULTS"
START=$(date +%s)
say() { echo "== [$(( $(date +%s) - START ))s] $*"; }

# -- 1. the virtual environment ------------------------------------------------------------
if [ -n "$FRESH" ]; then rm -rf "$VENV"; fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $PY_BASE"
  if command -v uv >/dev/null 2>&1; then
    uv venv --quiet --python "$PY_BASE" "$VENV"
  else
    "$PY_BASE" -m venv "$VENV"
  fi
fi
PY="$VENV/bin/python"
if command -v uv >/dev/null 2>&1; then
  UV=$(command -v uv)
elif [ -x "$VENV/bin/uv" ]; then
  UV="$VENV/bin/uv"
else
  say "installing uv into $VENV"
  if ! "$PY" -m pip --version >/dev/null 2>&1; then "$PY" -m ensurepip --upgrade >/dev/null; fi
  "$PY" -m pip install --quiet --disable-pip-version-check uv
  UV="$VENV/bin/uv"
fi
uvpip() { "$UV" pip install --quiet --python "$PY" "$@"; }

# -- 2. the project and the peers --------------------------------------------------------------
say "installing toolpacks (editable)"
uvpip -e .
say "installing the peers: ${PEERS[*]}"
LOGDIR=$(mktemp -d)
# One resolution for all of them first; if that fails, one at a time so one bad peer
# does not keep the others out.
if ! uvpip "${PEERS[@]}" >"$LOGDIR/all.log" 2>&1; then
  echo "   installing them together failed; trying one at a time"
  for peer in "${PEERS[@]}"; do
    uvpip "$peer" >"$LOGDIR/$peer.log" 2>&1 || echo "   $peer failed to install (recorded)"
  done
fi
"$PY" - "$LOGDIR" "${PEERS[@]}" <<'EOF'
import json, platform, sys
from importlib import metadata
from pathlib import Path

logdir, peers = Path(sys.argv[1]), sys.argv[2:]
packages = {}
for dist in peers:
    try:
        packages[dist] = {"ok": True, "version": metadata.version(dist)}
    except metadata.PackageNotFoundError:
        log = logdir / f"{dist}.log"
        if not log.exists():
            log = logdir / "all.log"
        error = log.read_text(errors="replace")[-2000:] if log.exists() else "not installed"
        packages[dist] = {"ok": False, "error": error}
out = {"python": platform.python_version(), "packages": packages}
Path("bench/results/install.json").write_text(json.dumps(out, indent=2) + "\n")
for dist, entry in packages.items():
    print(f"   {dist}: {entry.get('version') or 'FAILED'}")
EOF
rm -rf "$LOGDIR"

# -- 3. the benchmarks -------------------------------------------------------------------------
export PYTHONHASHSEED=0
say "bench_core.py (toolpacks against the floor)"
"$PY" bench/bench_core.py $QUICK
say "bench_peers.py (toolpacks and the peers, side by side)"
"$PY" bench/bench_peers.py $QUICK
if [ -f bench/bench_discovery.py ]; then
  say "bench_discovery.py (N installed packs)"
  DISCOVERY_ARGS=()
  if [ -n "$QUICK" ] && grep -q -- "--quick" bench/bench_discovery.py; then DISCOVERY_ARGS=(--quick); fi
  # Its console output is kept too, for the report when it writes no discovery*.json.
  if ! "$PY" bench/bench_discovery.py "${DISCOVERY_ARGS[@]}" | tee "$RESULTS/discovery.txt"; then
    echo "   bench_discovery.py failed; its section is left out of the report" >&2
    rm -f "$RESULTS/discovery.txt"
  fi
else
  say "bench/bench_discovery.py not present: discovery left out"
fi
say "bench_adapters.py (each framework adapter against the framework's native tool)"
"$PY" bench/bench_adapters.py $QUICK || echo "   bench_adapters.py failed; its section is left out" >&2
say "bench_startup.py (import, serve cold start, tools listed from pack manifests)"
"$PY" bench/bench_startup.py $QUICK
say "profile_invoke.py (where toolpacks' per-call time goes)"
if [ -n "$QUICK" ]; then
  "$PY" bench/profile_invoke.py --repeats 5 --number 5000
else
  "$PY" bench/profile_invoke.py
fi

# MCP over HTTP under load (issue 15), with locust. A venv of its own inside bench/.venv: the
# toolpacks HTTP server needs mcp>=2.3, and strands-agents (a peer above) pins mcp<2.2.
HTTP_VENV="$VENV/http"
say "bench_http.py (MCP over streamable HTTP under load: toolpacks and FastMCP, locust)"
if [ ! -x "$HTTP_VENV/bin/python" ]; then "$UV" venv --quiet --python "$PY" "$HTTP_VENV"; fi
if ! "$UV" pip install --quiet --python "$HTTP_VENV/bin/python" -e ".[http]" fastmcp locust; then
  echo "   installing toolpacks[http], fastmcp and locust failed; the HTTP section is left out" >&2
elif ! "$HTTP_VENV/bin/python" bench/bench_http.py $QUICK; then
  echo "   bench_http.py failed; the HTTP section keeps its previous results, if any" >&2
fi

# -- 4. the report -----------------------------------------------------------------------------
say "report"
"$PY" bench/report.py
say "done"
