#!/usr/bin/env bash
# Install the Debian packages the host needs (idempotent).
#   debootstrap  builds the base image root
#   zookeeper    runs the integration tier's ensemble as local processes
#   gcc, libc6-dev  compile the broker image's clock shim (docker/clock/)
#   fuse3        libfuse 3, which the disk layers mount with (harness.disk_layer)
#   chromium, chromium-driver  the headless browser the report's browser test drives
# Usage: scripts/ensure-host-packages.sh
set -euo pipefail

wanted=(debootstrap zookeeper gcc libc6-dev fuse3 chromium chromium-driver)
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "==> installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# Refresh the package lists once if they are absent or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n1)" ]; then
    $SUDO apt-get update -qq >/dev/null
fi
log=$(mktemp)
if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
rm -f "$log"
