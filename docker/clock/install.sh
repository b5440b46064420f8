#!/bin/sh
# Run by the broker and ZooKeeper images' builds (as root) from the staged clock/
# directory: install Debian's libfaketime and the shim, and the clock file with the
# real time (docker/clock/README.md).
set -eu
here=$(dirname "$0")
dpkg -i "$here"/libfaketime_*.deb >/dev/null
install -m 0644 "$here/clock_nanosleep_shim.so" /usr/local/lib/clock_nanosleep_shim.so
install -d -m 0755 /var/lib/faketime
echo '+0 x1' >/var/lib/faketime/clock.rc
chmod 0644 /var/lib/faketime/clock.rc
