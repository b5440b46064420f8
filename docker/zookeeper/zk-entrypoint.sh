#!/bin/bash
# Write zoo.cfg from the environment and exec the ZooKeeper server in the
# foreground (it is PID 1 and receives the container's signals).
#   ZK_MYID       this server's id (1..n)                    (required)
#   ZK_SERVERS    comma-separated host names, id = position  (default: standalone)
#   ZK_TICK_MS    tickTime; sessions may last 2..maxSession   (default 500)
#   ZK_MIN_SESSION_MS / ZK_MAX_SESSION_MS                     (default 1000 / 60000)
#   ZK_HEAP       JVM heap                                    (default 256m)
set -euo pipefail
: "${ZK_MYID:?ZK_MYID must be set}"
tick=${ZK_TICK_MS:-500}
conf=/data/zoo.cfg
if [ ! -w /data ]; then
    echo "zk-entrypoint: /data is not writable by $(id -un) (uid $(id -u)); a volume made" \
        "by an image that ran as root? \`make down\` removes the old volumes" >&2
    exit 1
fi
mkdir -p /data/zk
echo "$ZK_MYID" >/data/zk/myid
cat >"$conf" <<CFG
tickTime=$tick
initLimit=20
syncLimit=10
minSessionTimeout=${ZK_MIN_SESSION_MS:-1000}
maxSessionTimeout=${ZK_MAX_SESSION_MS:-60000}
dataDir=/data/zk
clientPort=2181
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
autopurge.purgeInterval=1
quorumListenOnAllIPs=true
CFG
if [ -n "${ZK_SERVERS:-}" ]; then
    i=1
    IFS=',' read -ra hosts <<<"$ZK_SERVERS"
    for h in "${hosts[@]}"; do
        echo "server.$i=$h:2888:3888" >>"$conf"
        i=$((i + 1))
    done
fi
exec java -Xms64m -Xmx"${ZK_HEAP:-256m}" \
    -Dzookeeper.root.logger=INFO,CONSOLE \
    -Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties \
    -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf"
