"""The cluster's secrets: generated once into `.secrets/` (`python -m security init`),
loaded by the processes that need them. ZooKeeper digest credentials and Kafka's secure
ACLs live in `security.zk_credentials`; the control plane's TLS certificates in
`security.tls` (laid out and loaded by `security.tls_files`); private files in
`security.secret_files`. Imports nothing from the controller or the broker."""
