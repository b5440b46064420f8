#!/usr/bin/env bash
# Make `docker compose` (v2) available (idempotent).
#
# Debian bookworm only packages compose v1.  Debian trixie's `docker-compose`
# 2.x package carries the v2 CLI plugin; fetch that .deb with apt through a
# private source list (the host's apt configuration is not touched) and copy
# the plugin binary into ~/.docker/cli-plugins/.
set -euo pipefail

if docker compose version >/dev/null 2>&1; then
    exit 0
fi
echo "==> installing the docker compose v2 plugin from Debian trixie"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d "${TMPDIR:-/tmp}/testbed-compose.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/deb"
cat >"$work/sources.list" <<LIST
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
LIST
apt_opts=(
    -o "Dir::Etc::SourceList=$work/sources.list"
    -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache::Archives=$work/archives"
    -o "APT::Get::List-Cleanup=0"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
)
apt-get "${apt_opts[@]}" update -qq >/dev/null
(cd "$work/deb" && apt-get "${apt_opts[@]}" download docker-compose >/dev/null)
deb=$(ls "$work"/deb/docker-compose_*.deb)
dpkg-deb -x "$deb" "$work/extract"
plugin="$work/extract/usr/libexec/docker/cli-plugins/docker-compose"
[ -x "$plugin" ] || { echo "no compose plugin inside $deb" >&2; exit 1; }
mkdir -p "$HOME/.docker/cli-plugins"
install -m 0755 "$plugin" "$HOME/.docker/cli-plugins/docker-compose"
docker compose version
