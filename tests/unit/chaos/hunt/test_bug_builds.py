"""The bug hunt's builds: the compose environment of a switch, and when a recreated
cluster counts as settled (the switches asked for, every broker registered, the same
controller and epoch for `STABLE_S`)."""

from __future__ import annotations

from chaos.hunt.builds import STABLE_S, Observation, settled, switch_env

ON = {"broker1": ("kafka-1188",), "broker2": ("kafka-1188",)}


def _seen(at: float, switches=ON, unregistered=(), controller=1, epoch=4) -> Observation:  # type: ignore[no-untyped-def]
    return Observation(at, switches, unregistered, controller, epoch)


def test_the_environment_of_a_switch_and_of_the_fixed_build() -> None:
    assert switch_env(("kafka-1188",)) == {
        "BUG_SWITCHES": "kafka-1188",
        "BUG_SWITCHES_CONTEXT": "chaos",
    }
    assert switch_env(()) == {"BUG_SWITCHES": "", "BUG_SWITCHES_CONTEXT": ""}


def test_settled_once_the_same_controller_held_long_enough() -> None:
    first = _seen(10.0)
    assert settled(("kafka-1188",), first, _seen(10.0 + STABLE_S)) == (True, "")
    done, why = settled(("kafka-1188",), first, _seen(11.0))
    assert not done
    assert "held for 1.0 s" in why


def test_not_settled_while_anything_is_off() -> None:
    wanted = ("kafka-1188",)
    first = _seen(0.0)
    late = 100.0
    assert not settled((), first, _seen(late))[0]  # brokers still run the switch
    mixed = {"broker1": ("kafka-1188",), "broker2": ()}
    assert "other switches" in settled(wanted, first, _seen(late, switches=mixed))[1]
    assert "not registered" in settled(wanted, first, _seen(late, unregistered=(2,)))[1]
    assert settled(wanted, first, _seen(late, controller=None))[1] == "no controller"
    assert "just elected" in settled(wanted, first, _seen(late, epoch=5))[1]
    assert not settled(wanted, None, _seen(late))[0]
    assert not settled(wanted, first, _seen(late, switches={}))[0]
