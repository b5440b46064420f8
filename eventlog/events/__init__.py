"""The event types, one module per part of the testbed that writes them (docs/events.md
lists them in this order). `eventlog.EVENT_TYPES` maps each kind's name to its type."""
