"""The cluster's secrets: generated once into `.secrets/` (`python -m security init`),
loaded by the processes that need them. ZooKeeper digest credentials and Kafka's secure
ACLs live in `security.zk_credentials`; private files in `security.secret_files`."""
