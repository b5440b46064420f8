#!/usr/bin/env bash
# Print UID:GID of the user the broker containers run as: the host user's, so that
# the event logs they write under the bind-mounted runs/ are the host user's to read
# and delete; a root host gets 10001:10001 instead (root can delete anything, and the
# containers must not run as root).  Usage: scripts/container-user.sh
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
    echo "10001:10001"
else
    echo "$(id -u):$(id -g)"
fi
