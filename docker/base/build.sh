#!/usr/bin/env bash
# Build the project's Debian bookworm base image without any registry:
# debootstrap a minimal root with the packages every image needs, then
# `docker import` it.  The ZooKeeper and broker images are built FROM it.
#
# Usage: docker/base/build.sh IMAGE_TAG INPUT_HASH
set -euo pipefail

tag=$1
inputs=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# JRE + zookeeper for the ensemble, python3 for the brokers, iproute2 and
# iptables so chaos can cut links from inside a container's namespace.
packages=openjdk-17-jre-headless,zookeeper,python3,python3-venv,iproute2,iptables,procps,ca-certificates

work=$(mktemp -d "${TMPDIR:-/tmp}/testbed-base.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "    debootstrap bookworm (minbase + ${packages//,/ }) — about 1-2 minutes"
log="$work/debootstrap.log"
debootstrap --variant=minbase --include="$packages" bookworm "$work/root" "$mirror" >"$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    step=$(grep -E '^I: (Retrieving|Validating|Extracting|Unpacking|Configuring|Installing)' "$log" | tail -n1 || true)
    printf '    %s\n' "${step:-starting}"
done
if ! wait "$pid"; then
    tail -n 30 "$log" >&2
    echo "debootstrap failed (full log above)" >&2
    exit 1
fi

# Slim the root: package caches and docs are not needed at run time.
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"* \
       "$work/root/usr/share/doc" "$work/root/usr/share/man" "$work/root/usr/share/locale"

echo "    docker import -> $tag"
tar -C "$work/root" -c . | docker import \
    --change "LABEL testbed.inputs=$inputs" \
    --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$tag" >/dev/null
