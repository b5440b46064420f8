#!/usr/bin/env bash
# Create the cluster's missing secrets in .secrets/ (idempotent) and the runs/
# directory the brokers write into, both usable by the containers' user
# (scripts/container-user.sh).  Usage: scripts/ensure-secrets.sh PYTHON
set -euo pipefail
py=${1:-.venv/bin/python}
owner=$(scripts/container-user.sh)
"$py" -m security init --dir .secrets --owner "$owner" | sed 's/^/    /'
scripts/ensure-run-dir.sh runs
