#!/usr/bin/env bash
# Build the project's images, each only when its inputs changed.
#
#   testbed-base       debootstrap'd Debian bookworm (docker/base/build.sh)
#   testbed-zookeeper  FROM base: Debian's zookeeper + entrypoint, run as the user
#                      of scripts/container-user.sh (a build argument),
#                      + libfaketime and its shim, staged by stage_clock
#   testbed-broker     FROM base: venv from host-downloaded wheels + the code,
#                      run as the user of scripts/container-user.sh (a build argument),
#                      + libfaketime and its shim, staged by stage_clock
#
# Every image carries the label testbed.inputs = a hash of what it was built
# from (for the children: including the parent's hash).  An image whose label
# matches is left alone.  TESTBED_TAG (default latest) tags the ZooKeeper and broker
# images otherwise, to try a change beside the images in use (docker-compose.yml
# runs the same tag).  Usage: scripts/build-images.sh PYTHON
set -euo pipefail
py=${1:-.venv/bin/python}
stage=.build
tag=${TESTBED_TAG:-latest}
mkdir -p "$stage"

label_of() { docker image inspect -f '{{index .Config.Labels "testbed.inputs"}}' "$1" 2>/dev/null || true; }
hash_dir() { (cd "$1" && find . -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }

step() { printf '==> [%s/3] %s\n' "$1" "$2"; }

# 1. base
base_hash=$(cat docker/base/build.sh | sha256sum | cut -c1-16)
if [ "$(label_of testbed-base:latest)" = "$base_hash" ]; then
    step 1 "testbed-base is up to date"
else
    step 1 "building testbed-base (debootstrap, no registry)"
    docker/base/build.sh testbed-base:latest "$base_hash"
fi

build() {  # n name context hash [docker build arguments...]
    local n=$1 name=$2 ctx=$3 hash=$4
    shift 4
    if [ "$(label_of "$name:$tag")" = "$hash" ]; then
        step "$n" "$name is up to date"
        return
    fi
    step "$n" "building $name"
    local log
    log=$(mktemp)
    # The legacy builder resolves FROM against local images only (nothing is pulled).
    DOCKER_BUILDKIT=0 docker build "$@" --label "testbed.inputs=$hash" -t "$name:$tag" "$ctx" 2>&1 \
        | tee "$log" | grep --line-buffered -E '^Step [0-9]+/[0-9]+' | sed -u 's/^/    /' || true
    if [ "$(label_of "$name:$tag")" != "$hash" ]; then
        tail -n 40 "$log" >&2
        echo "building $name failed" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
}

# The brokers' and ZooKeeper servers' faked wall clock (docker/clock/README.md):
# Debian's libfaketime, downloaded on the host, and the shim compiled on the host.
stage_clock() {  # context directory
    local out=$stage/clock
    if [ ! -s "$out/clock_nanosleep_shim.so" ] || [ docker/clock/clock_nanosleep_shim.c -nt "$out/clock_nanosleep_shim.so" ] \
        || [ -z "$(ls "$out"/libfaketime_*.deb 2>/dev/null)" ]; then
        mkdir -p "$out" && rm -f "$out"/*
        (cd "$out" && apt-get download -q libfaketime >/dev/null 2>&1) || { echo "apt-get download libfaketime failed" >&2; exit 1; }
        "${CC:-cc}" -O2 -shared -fPIC -o "$out/clock_nanosleep_shim.so" docker/clock/clock_nanosleep_shim.c -ldl
    fi
    rm -rf "$1/clock" && cp -r "$out" "$1/clock" && cp docker/clock/install.sh "$1/clock/"
}

# 2. zookeeper: its sources + the clock, hash the staged context; its user gets the
# containers' UID and GID, which own its TLS key
owner=$(scripts/container-user.sh)
zk_ctx=$stage/zookeeper
rm -rf "$zk_ctx" && mkdir -p "$zk_ctx" && cp docker/zookeeper/* "$zk_ctx/"
stage_clock "$zk_ctx"
zk_hash=$( (echo "$base_hash"; echo "user $owner"; hash_dir "$zk_ctx") | sha256sum | cut -c1-16)
build 2 testbed-zookeeper "$zk_ctx" "$zk_hash" \
    --build-arg "TESTBED_UID=${owner%%:*}" --build-arg "TESTBED_GID=${owner##*:}"

# 3. broker: stage wheels + sources, hash the staged context.
ctx=$stage/broker
mkdir -p "$ctx/wheels"
"$py" - >"$ctx/wheels/requirements.txt.new" <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
PY
if ! cmp -s "$ctx/wheels/requirements.txt.new" "$ctx/wheels/requirements.txt" || [ -z "$(ls "$ctx"/wheels/*.whl 2>/dev/null)" ]; then
    echo "    downloading runtime wheels on the host"
    rm -f "$ctx"/wheels/*.whl
    "$py" -m pip download -q --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
        -d "$ctx/wheels" -r "$ctx/wheels/requirements.txt.new"
fi
mv "$ctx/wheels/requirements.txt.new" "$ctx/wheels/requirements.txt"
cp docker/broker/Dockerfile "$ctx/Dockerfile"
stage_clock "$ctx"
rm -rf "$ctx/src" && mkdir -p "$ctx/src"
for pkg in domain bugs admin client broker_node controller zkdata rpc eventlog security testbed testbed_rpc; do
    cp -r "$pkg" "$ctx/src/$pkg"
done
find "$ctx/src" -name '__pycache__' -type d -prune -exec rm -rf {} +
broker_hash=$( (echo "$base_hash"; echo "user $owner"; hash_dir "$ctx") | sha256sum | cut -c1-16)
build 3 testbed-broker "$ctx" "$broker_hash" \
    --build-arg "TESTBED_UID=${owner%%:*}" --build-arg "TESTBED_GID=${owner##*:}"
