"""The broker process: configuration, ZooKeeper session and registration, the control-plane
gRPC service, the metadata cache, and the controller every broker carries."""
