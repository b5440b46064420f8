#!/bin/bash
# Write zoo.cfg from the environment and exec the ZooKeeper server in the
# foreground (it is PID 1 and receives the container's signals).
#   ZK_MYID       this server's id (1..n)                    (required)
#   ZK_SERVERS    comma-separated host names, id = position  (default: standalone)
#   ZK_TICK_MS    tickTime; sessions may last 2..maxSession   (default 500)
#   ZK_MIN_SESSION_MS / ZK_MAX_SESSION_MS                     (default 1000 / 60000)
#   ZK_HEAP       JVM heap                                    (default 256m)
#   ZK_TLS_DIR    a directory holding ca.crt and server.pem (this server's key and
#                 certificate, PEM): the client port 2181 speaks TLS only, clients
#                 must present a certificate of that CA, and the quorum's own
#                 traffic (2888, 3888) is TLS too.  Unset: plaintext everywhere.
# The admin server (HTTP, the health check's `srvr`) listens on the container's
# loopback interface only.
set -euo pipefail
: "${ZK_MYID:?ZK_MYID must be set}"
tick=${ZK_TICK_MS:-500}
conf=/data/zoo.cfg
if [ ! -w /data ]; then
    echo "zk-entrypoint: /data is not writable by $(id -un) (uid $(id -u)); a volume made" \
        "by an older image? \`make down\` removes the old volumes" >&2
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
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=true
admin.serverAddress=127.0.0.1
admin.serverPort=8080
autopurge.purgeInterval=1
quorumListenOnAllIPs=true
CFG
if [ -n "${ZK_TLS_DIR:-}" ]; then
    for f in ca.crt server.pem; do
        if [ ! -r "$ZK_TLS_DIR/$f" ]; then
            echo "zk-entrypoint: $ZK_TLS_DIR/$f is missing or not readable by $(id -un)" \
                "(uid $(id -u)); run \`make setup\` and \`make images\`" >&2
            exit 1
        fi
    done
    # The peers check each other against the CA only: ZooKeeper 3.8.0 checks a
    # connecting peer's certificate against the reverse DNS name of its address, which
    # Docker's DNS answers with the container's name on the network, not the service.
    cat >>"$conf" <<CFG
secureClientPort=2181
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$ZK_TLS_DIR/server.pem
ssl.keyStore.type=PEM
ssl.trustStore.location=$ZK_TLS_DIR/ca.crt
ssl.trustStore.type=PEM
ssl.clientAuth=need
sslQuorum=true
ssl.quorum.keyStore.location=$ZK_TLS_DIR/server.pem
ssl.quorum.keyStore.type=PEM
ssl.quorum.trustStore.location=$ZK_TLS_DIR/ca.crt
ssl.quorum.trustStore.type=PEM
ssl.quorum.clientAuth=need
ssl.quorum.hostnameVerification=false
CFG
else
    echo "clientPort=2181" >>"$conf"
fi
if [ -n "${ZK_SERVERS:-}" ]; then
    i=1
    IFS=',' read -ra hosts <<<"$ZK_SERVERS"
    for h in "${hosts[@]}"; do
        echo "server.$i=$h:2888:3888" >>"$conf"
        i=$((i + 1))
    done
fi
# zookeeper.jar's manifest names most of its dependencies; the Netty connection
# factory's TLS handler also needs netty-codec and netty-resolver, and the admin server
# the servlet API, which the manifest leaves out.
jars=/usr/share/java
exec java -Xms64m -Xmx"${ZK_HEAP:-256m}" \
    -Dzookeeper.root.logger=INFO,CONSOLE \
    -Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties \
    -cp "$jars/zookeeper.jar:$jars/netty-codec.jar:$jars/netty-resolver.jar:$jars/servlet-api.jar:$jars/slf4j-log4j12.jar:$jars/log4j-1.2.jar" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf"
