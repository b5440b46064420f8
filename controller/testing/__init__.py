"""Test doubles for the controller core, shipped beside what they replace (STYLE rule 13).

They stand in for ZooKeeper, the brokers and their connections so that tests of pure
controller logic (the state machines, the request batch, topic deletion, the channel
manager's sender threads) run without I/O:

- `controller.testing.zookeeper`: `FakePartitionZk` (state znodes) and `FakeDeletionZk`
  (the znodes topic deletion removes).
- `controller.testing.brokers`: `make_broker`, `RecordingSend` (the request batch's send)
  `FakeBrokerChannel` (a broker connection) and `FakeChannels` (the channel manager's
  `connect`, one `FakeBrokerChannel` per broker).
- `controller.testing.registrations`: `FakeRegistrationsZk` (`/brokers/ids/N` with their
  data watches).
- `controller.testing.broker_changes`: `broker_changes_for` (a `BrokerChanges` with real
  state machines on a recording batch, the other duties stubbed).

The event log's double is `eventlog.testing.RecordingEventLog`. Each module's docstring
says which threads may use its doubles.
"""
