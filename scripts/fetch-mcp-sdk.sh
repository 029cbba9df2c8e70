#!/usr/bin/env bash
# Installs the official MCP Python SDK (from PyPI, pinned) into
# ~/.cache/trine/pylib (or $TRINE_PYTHONPATH): the MCP client trine did not
# write that trine/tests/mcp.rs drives `trine mcp` and `serve --http` with.
# Idempotent; when PyPI cannot be reached it says so and the MCP tests skip.
set -euo pipefail
target="${TRINE_PYTHONPATH:-$HOME/.cache/trine/pylib}"
if PYTHONPATH="$target" python3 -c "import mcp.client.stdio, mcp.client.streamable_http" 2>/dev/null; then
    exit 0
fi
mkdir -p "$target"
if python3 -m pip install --quiet --disable-pip-version-check --target "$target" 'mcp==1.30.0' >&2; then
    echo "mcp sdk: installed into $target" >&2
else
    echo "mcp sdk: could not be installed (no PyPI?): the MCP client tests will say they are skipped" >&2
fi
