"""The data plane: acks=all and acks=1 produce throughput against the gRPC round-trip floor
of Metadata RPCs (`python -m bench.produce`, `throughput`; also a step of
`python -m bench all`). `rpc_load` times load from client threads, `producers` sends
batches through `client.Client`, `phases` holds a measured phase, its CPU per operation and
the notes; `options` declares the benchmark's options. Main thread, plus the load's worker
threads.
"""
