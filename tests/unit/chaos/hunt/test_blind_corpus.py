"""The blind hunt's choice of schedules: a pure function of the hunt's seed and the
coverage recorded so far; fresh seeds first from the given list; rare behaviours weigh
more; every mutation is a valid schedule that keeps faults apart, before the heal, with
the parent's seed and actions."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

from chaos.generator.correlated import outside_cut
from chaos.generator.generic import generic_schedule
from chaos.generator.groups import groups_in
from chaos.generator.overlap import clashes, overlap_violations
from chaos.generator.replication import PAIRS, TRIPLES
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.hunt.corpus import (
    GRAFTS,
    HEAL_S,
    MUTATIONS,
    ROLE_FAMILIES,
    Corpus,
    Planner,
    _graft,
    draw_schedule,
    mutate,
)

RUN_S = 45.0


def _draw(seed: int) -> Schedule:
    return draw_schedule(seed, RUN_S)


def _coverage(schedule: Schedule) -> frozenset[str]:
    """A stand-in for a run's coverage: one behaviour per step's kind and target."""
    return frozenset(f"{s.fault.kind}:{s.fault.target}" for s in schedule.steps)


def _choices(
    hunt_seed: int | str, runs: int, seeds: tuple[int, ...] = ()
) -> list[tuple[str, Schedule]]:
    planner = Planner(hunt_seed, _draw, seeds)
    chosen = []
    for _ in range(runs):
        choice = planner.next()
        planner.record(choice.schedule, _coverage(choice.schedule))
        chosen.append((choice.origin, choice.schedule))
    return chosen


def test_the_same_hunt_seed_and_coverage_give_the_same_schedules() -> None:
    assert _choices("7:kip-380", 15) == _choices("7:kip-380", 15)


def test_another_hunt_seed_gives_other_schedules() -> None:
    assert [s for _, s in _choices(1, 5)] != [s for _, s in _choices(2, 5)]


def test_the_first_run_is_fresh_and_later_runs_mutate_or_draw_afresh() -> None:
    origins = [o for o, _ in _choices(3, 20)]
    assert origins[0].startswith("fresh seed ")
    assert any(o.startswith("run ") for o in origins)
    assert any(o.startswith("fresh seed ") for o in origins[1:])


def test_fresh_schedules_take_the_given_seeds_first() -> None:
    planner = Planner(1, _draw, seeds=(11, 12), fresh_share=1.0)
    first, second, third = planner.next(), planner.next(), planner.next()
    assert (first.origin, first.schedule) == ("fresh seed 11", _draw(11))
    assert (second.origin, second.schedule) == ("fresh seed 12", _draw(12))
    assert third.origin.startswith("fresh seed ")


def test_without_any_behaviour_reached_every_run_is_fresh() -> None:
    planner = Planner(5, _draw, fresh_share=0.0)
    for _ in range(4):
        choice = planner.next()
        assert choice.origin.startswith("fresh seed ")
        assert planner.record(choice.schedule, frozenset()) == 0


def test_a_schedule_is_never_chosen_twice_by_mutation() -> None:
    chosen = [s for o, s in _choices(9, 25) if o.startswith("run ")]
    assert len(chosen) == len(set(chosen))


def test_a_rare_graft_takes_the_group_the_runs_held_least() -> None:
    planner = Planner(1, _draw, fresh_share=0.0)
    for seed in (1, 2, 3):
        planner.record(_draw(seed), frozenset({f"b{seed}"}))
    held = Counter(g for seed in (1, 2, 3) for g in groups_in(_draw(seed)))
    parent = planner.corpus.entries[0]
    lacking = [g for g in GRAFTS if g not in groups_in(parent.schedule)]
    fewest = min(held[g] for g in lacking)
    for _ in range(10):
        assert held[planner._rarest(parent) or ""] == fewest
    child = mutate(random.Random(4), parent.schedule, _draw, graft="cut-in-turn")
    assert child is not None
    assert child[1][0].startswith("graft cut-in-turn")
    assert "cut-in-turn" in groups_in(child[0])


def test_hunts_of_ten_runs_hold_most_groups() -> None:
    """Single-step mutations of a parent rarely build a group it lacks: grafting the
    group the runs held least brings most of the ten into ten runs."""
    counts = []
    for hunt in range(12):
        planner = Planner(f"{hunt}:groups", _draw)
        held: set[str] = set()
        for run in range(10):
            choice = planner.next()
            held |= groups_in(choice.schedule)
            planner.record(choice.schedule, frozenset({f"{hunt}:{run % 4}"}))
        counts.append(len(held))
    assert sum(counts) / len(counts) >= 7


def test_rare_behaviours_weigh_more_and_record_counts_the_new_ones() -> None:
    corpus = Corpus()
    schedule = _draw(1)
    for _ in range(3):
        corpus = corpus.add(schedule, frozenset({"common"}))
    corpus = corpus.add(schedule, frozenset({"common", "rare"}))
    common, rare = corpus.entries[0], corpus.entries[3]
    assert corpus.weight(common) == 0.25
    assert corpus.weight(rare) == 1.25
    assert corpus.reached == {"common", "rare"}
    planner = Planner(1, _draw)
    assert planner.record(schedule, frozenset({"a", "b"})) == 2
    assert planner.record(schedule, frozenset({"b", "c"})) == 1


def test_mutations_make_valid_schedules_with_faults_apart_before_the_heal() -> None:
    for seed in range(40):
        parent = _draw(seed)
        rng = random.Random(seed)
        found = mutate(rng, parent, _draw)
        assert found is not None
        child, done = found
        assert 1 <= len(done) <= 2
        assert child != parent or all(d.startswith("shift") for d in done)
        assert child.seed == parent.seed
        assert _added_actions(parent, child) in ((), ("move-controller",))
        assert (child.heal_at_s, child.end_s) == (parent.heal_at_s, parent.end_s)
        assert all(s.ends_s <= child.heal_at_s for s in child.steps)
        assert overlap_violations(child) == []
        assert [s.at_s for s in child.steps] == sorted(s.at_s for s in child.steps)


def test_each_mutation_does_what_it_says() -> None:
    seen: set[str] = set()
    for seed in range(400):
        if seen == set(MUTATIONS):
            break
        parent = _draw(seed)
        found = mutate(random.Random(seed), parent, _draw)
        assert found is not None
        child, done = found
        if len(done) != 1:
            continue
        what = done[0]
        seen.add(what.split()[0])
        if what.startswith("drop"):
            assert len(child.steps) == len(parent.steps) - 1
            assert set(child.steps) < set(parent.steps)
        elif what.startswith("add"):
            assert len(child.steps) == len(parent.steps) + 1
            assert set(parent.steps) < set(child.steps)
        elif what.startswith("shift"):
            moved = set(child.steps) - set(parent.steps)
            assert len(moved) == 1
            assert [s.fault for s in child.steps] == [s.fault for s in parent.steps] or moved
        elif what.startswith("replicate"):
            assert child.steps == parent.steps
            assert {child.replication, parent.replication} == {PAIRS, TRIPLES}
        elif what.startswith("graft"):
            assert what.split()[1] in GRAFTS
            grafted = set(child.steps) - set(parent.steps)
            assert grafted
            assert set(child.steps) - grafted <= set(parent.steps)
            assert min(s.at_s for s in grafted) == float(what.split()[3].rstrip("s"))
        else:
            changed = [
                (a.fault.target, b.fault.target)
                for a, b in zip(parent.steps, child.steps, strict=True)
                if a != b
            ]
            assert len(changed) == 1
            before, after = changed[0]
            assert any(before in f and after in f for f in ROLE_FAMILIES)
    assert seen == set(MUTATIONS)


def test_a_step_is_added_or_shifted_only_where_the_overlap_rules_let_it_be() -> None:
    kill = FaultSpec.of("kill", "controller")
    crowded = Schedule(
        1,
        (Step(2.0, 10.0, kill), Step(20.0, 9.9, FaultSpec.of("kill", "non-controller"))),
        30.0,
        45.0,
        (Action(2.0, "reassign", (("topic", "chaos-random"),)),),
    )
    kinds = set()
    for seed in range(60):
        found = mutate(random.Random(seed), crowded, _draw)
        assert found is not None
        child, done = found
        assert _added_actions(crowded, child) in ((), ("move-controller",))
        if len(done) == 1 and done[0].split()[0] in ("add", "shift"):
            kinds.add(done[0].split()[0])
            assert overlap_violations(child) == []
            # two kills of two brokers: never at once, a recovery apart
            kills = [s for s in child.steps if s.fault.kind == "kill"]
            if len(kills) == 2:
                assert not list(clashes(kills[0], [kills[1]]))
    assert kinds == {"add", "shift"}


def test_nothing_is_added_beside_a_partition_of_the_whole_cluster() -> None:
    """A partition of the whole cluster overlaps nothing (overlap rule 1)."""
    partition = FaultSpec.of("partition", "all", {"grudge": "isolate"})
    whole = Schedule(1, (Step(1.0, 28.9, partition),), 30.0, 45.0)
    # nor can it move: it ends a tenth of a second before the heal; a graft replaces it
    for seed in range(30):
        found = mutate(random.Random(seed), whole, _draw)
        if found is not None:
            child, done = found
            assert done[0].startswith("graft")
            assert overlap_violations(child) == []


def _added_actions(parent: Schedule, child: Schedule) -> tuple[str, ...]:
    """The kinds of the actions `child` has that `parent` has not (parent's all kept but
    the forced elections a grafted group keeps out, `outside_cut`)."""
    dropped = set(parent.actions) - set(child.actions)
    assert not dropped & set(outside_cut(child.steps, parent.actions))
    return tuple(a.kind for a in child.actions if a not in parent.actions)


def test_a_graft_places_a_whole_group_and_drops_only_what_it_cannot_be_beside() -> None:
    names = set()
    for seed in range(200):
        parent = _draw(seed)
        child, what = _graft(random.Random(seed), parent, _draw)
        if child is None:
            continue
        names.add(what.split()[1])
        assert overlap_violations(child) == []
        grafted = [s for s in child.steps if s not in parent.steps]
        dropped = [s for s in parent.steps if s not in child.steps]
        assert grafted
        assert ("dropped" in what) == bool(dropped)
        # every step dropped could not be beside the group (with the steps kept before it)
        for step in dropped:
            kept_before = [s for s in parent.steps if s in child.steps and s.at_s <= step.at_s]
            assert next(clashes(step, [*grafted, *kept_before]), None) is not None
        if what.split()[1] == "race":
            (move,) = [a for a in child.actions if a not in parent.actions]
            assert move.kind == "move-controller"
            slowed = [s for s in grafted if s.fault.kind == "latency"]
            assert slowed
            assert slowed[0].fault.target == "controller"
            assert slowed[0].at_s < move.at_s < slowed[0].ends_s
        else:  # a forced election between the two cuts of a cut in turn makes way for it
            assert list(child.actions) == outside_cut(child.steps, parent.actions)
    assert names == set(GRAFTS)


def test_a_race_graft_chases_an_admin_operation_or_a_reset() -> None:
    quiet = Schedule(1, (Step(6.0, 2.0, FaultSpec.of("kill", "non-controller")),), 30.0, 45.0)
    chased = dataclasses.replace(
        quiet, actions=(Action(12.0, "elect-leaders", (("topic", "chaos-random"),)),)
    )
    resets = elections = 0
    for seed in range(200):
        child, what = _graft(random.Random(seed), chased, _draw)
        if child is None or not what.startswith("graft race"):
            continue
        (move,) = [a for a in child.actions if a.kind == "move-controller"]
        if any(s.fault.kind == "zk-reset" for s in child.steps):
            resets += 1
        else:
            elections += 1
            assert 12.2 <= move.at_s <= 13.2  # `CHASE_LAG` after the operation
    assert resets
    assert elections


def test_fresh_schedules_are_dense_so_a_short_run_holds_several_faults() -> None:
    # sparse, one seed in three held a single fault at 45 s: 186 of seeds 1 to 500
    schedules = [_draw(seed) for seed in range(1, 101)]
    assert schedules[0] == generic_schedule(1, RUN_S, heal_s=HEAL_S, sparse=False)
    single = sum(1 for s in schedules if len(s.steps) <= 1)
    assert single <= 5, f"{single} of 100 fresh schedules hold one fault or none"
    assert sum(len(s.steps) for s in schedules) / len(schedules) >= 5
