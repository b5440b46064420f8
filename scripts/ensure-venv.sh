#!/usr/bin/env bash
# Create .venv and install the project with its dev dependencies; reinstall
# only when pyproject.toml changed.  Usage: scripts/ensure-venv.sh
set -euo pipefail
want=$(sha256sum pyproject.toml | cut -c1-16)
stamp=.venv/.installed
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
echo "==> preparing the virtual environment .venv"
[ -x .venv/bin/python ] || python3.11 -m venv .venv 2>/dev/null || python3 -m venv .venv
log=$(mktemp)
if ! .venv/bin/python -m pip install -q -e '.[dev]' >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
rm -f "$log"
echo "$want" >"$stamp"
