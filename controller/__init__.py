"""The controller: election and fencing, one event thread, and (in the controller core)
the context, state machines and channel manager."""

from controller.controller import KafkaController

__all__ = ["KafkaController"]
