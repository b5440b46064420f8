#!/usr/bin/env bash
# Create a directory under runs/ that the broker containers may write into: owned by
# the containers' user (scripts/container-user.sh; on a non-root host that is the host
# user anyway).  Usage: scripts/ensure-run-dir.sh DIR
set -euo pipefail
owner=$(scripts/container-user.sh)
install -d -o "${owner%%:*}" -g "${owner##*:}" "$1"
