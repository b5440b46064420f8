#!/bin/bash
# Healthy when the server reports a mode (it has joined a quorum). Asked through the
# admin server on the container's loopback interface: the client port speaks TLS only,
# and the admin server answers `srvr` over plain HTTP without a client certificate.
exec 3<>/dev/tcp/127.0.0.1/8080 || exit 1
printf 'GET /commands/srvr HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
grep -qE '"server_state" : "(leader|follower|standalone)"' <&3
