#!/bin/bash
# Healthy when the server answers `srvr` with a mode (it has joined a quorum).
exec 3<>/dev/tcp/127.0.0.1/2181 || exit 1
printf 'srvr' >&3
grep -qE '^Mode: (leader|follower|standalone)' <&3
