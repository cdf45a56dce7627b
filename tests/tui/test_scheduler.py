"""TurnScheduler: which turn runs next, and when relayed turns wait for the user."""

from __future__ import annotations

import pytest

from zcoder.tui.state.scheduler import Next, TurnScheduler


def run_relays(scheduler: TurnScheduler, sequences: list[int]) -> list[int]:
    """Start relayed turns for ``sequences`` (the inbox, oldest first) while it says so."""
    ran = []
    for sequence in sequences:
        if scheduler.next_turn(sequence) is not Next.RELAY:
            break
        scheduler.relay_started()
        ran.append(sequence)
    return ran


def test_nothing_to_do():
    assert TurnScheduler().next_turn(None) is None


def test_a_relayed_message_runs_when_no_prompt_waits():
    assert TurnScheduler().next_turn(1) is Next.RELAY


def test_messages_accepted_before_the_prompt_run_first_and_later_ones_after():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("mine", last_accepted=5, oldest_waiting=4)
    assert scheduler.next_turn(4) is Next.RELAY
    scheduler.relay_started()
    assert scheduler.next_turn(5) is Next.RELAY
    scheduler.relay_started()
    assert scheduler.next_turn(6) is Next.PROMPT  # 6 was accepted after the prompt
    assert scheduler.pop_prompt() == "mine"
    assert scheduler.next_turn(6) is Next.RELAY


def test_prompts_run_first_in_first_out_each_behind_its_own_mark():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("one", last_accepted=2, oldest_waiting=None)
    scheduler.queue_prompt("two", last_accepted=4, oldest_waiting=3)
    assert scheduler.prompts() == ("one", "two")
    assert scheduler.next_turn(3) is Next.PROMPT
    assert scheduler.pop_prompt() == "one"
    assert scheduler.next_turn(3) is Next.RELAY  # 3 and 4 came before "two"
    scheduler.relay_started()
    assert scheduler.next_turn(5) is Next.PROMPT
    assert scheduler.pop_prompt() == "two"
    assert scheduler.prompts() == ()


def test_a_prompt_runs_when_no_message_can_be_claimed():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("mine", last_accepted=9, oldest_waiting=None)
    assert scheduler.next_turn(None) is Next.PROMPT  # nothing waits, or the relay is paused


def test_relayed_turns_stop_at_the_limit_and_nothing_is_lost():
    scheduler = TurnScheduler(max_auto_turns=8)
    assert run_relays(scheduler, list(range(1, 15))) == list(range(1, 9))
    assert scheduler.limited and scheduler.auto_turns == 8
    assert scheduler.next_turn(9) is None
    assert scheduler.holding(9)
    assert not scheduler.holding(None)  # limited, but nothing waits


def test_the_user_acting_resets_the_count():
    scheduler = TurnScheduler(max_auto_turns=3)
    assert run_relays(scheduler, [1, 2, 3, 4]) == [1, 2, 3]
    scheduler.note_user_acted()
    assert not scheduler.limited
    assert run_relays(scheduler, [4, 5, 6, 7]) == [4, 5, 6]


def test_zero_means_no_limit():
    scheduler = TurnScheduler(max_auto_turns=0)
    assert run_relays(scheduler, list(range(1, 101))) == list(range(1, 101))
    assert not scheduler.limited and not scheduler.holding(101)


def test_negative_limit_is_refused():
    with pytest.raises(ValueError):
        TurnScheduler(max_auto_turns=-1)


def test_queuing_a_prompt_is_the_user_acting():
    scheduler = TurnScheduler(max_auto_turns=2)
    run_relays(scheduler, [1, 2])
    assert scheduler.limited
    scheduler.queue_prompt("here", last_accepted=9, oldest_waiting=3)
    assert not scheduler.limited


def test_messages_held_for_the_user_do_not_go_before_a_new_prompt():
    scheduler = TurnScheduler(max_auto_turns=2)
    run_relays(scheduler, [1, 2])
    assert scheduler.holding(3)
    scheduler.queue_prompt("back", last_accepted=6, oldest_waiting=3)
    assert scheduler.next_turn(3) is Next.PROMPT
    scheduler.pop_prompt()
    assert scheduler.next_turn(3) is Next.RELAY  # and then they run, the count reset


def test_a_queued_prompt_runs_even_at_the_limit():
    scheduler = TurnScheduler(max_auto_turns=1)
    scheduler.queue_prompt("mine", last_accepted=5, oldest_waiting=1)
    run_relays(scheduler, [1])
    assert scheduler.limited
    assert scheduler.next_turn(2) is Next.PROMPT


def test_the_limit_is_announced_once_until_the_user_acts():
    scheduler = TurnScheduler(max_auto_turns=1)
    assert not scheduler.should_announce(1)
    run_relays(scheduler, [1])
    assert not scheduler.should_announce(None)  # nothing waits yet
    assert scheduler.should_announce(2)
    assert not scheduler.should_announce(2)
    assert not scheduler.should_announce(3)
    scheduler.note_user_acted()
    run_relays(scheduler, [2])
    assert scheduler.should_announce(3)


def test_the_last_prompt_can_be_taken_back_and_requeued_in_its_place():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("one", last_accepted=1, oldest_waiting=None)
    scheduler.queue_prompt("two", last_accepted=2, oldest_waiting=None)
    taken = scheduler.take_last()
    assert taken is not None and taken.text == "two"
    assert scheduler.prompts() == ("one",) and scheduler.editing()
    scheduler.queue_prompt("two, edited", last_accepted=7, oldest_waiting=3)
    assert not scheduler.editing()
    assert scheduler.pop_prompt() == "one"
    assert scheduler.next_turn(3) is Next.PROMPT  # it kept its mark (2), so 3 waits
    assert scheduler.pop_prompt() == "two, edited"


def test_a_prompt_taken_back_and_cleared_is_cancelled():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("only", last_accepted=1, oldest_waiting=None)
    taken = scheduler.take_last()
    assert taken is not None and taken.text == "only"
    assert scheduler.drop_recalled()
    assert not scheduler.editing() and scheduler.prompts() == ()
    assert scheduler.next_turn(2) is Next.RELAY
    assert not scheduler.drop_recalled()
    scheduler.queue_prompt("new", last_accepted=9, oldest_waiting=2)
    assert scheduler.next_turn(2) is Next.RELAY  # a new prompt takes a new mark


def test_take_last_with_nothing_queued():
    scheduler = TurnScheduler()
    assert scheduler.take_last() is None and not scheduler.editing()


def test_steering_left_by_a_turn_goes_before_follow_ups_and_relayed_tasks():
    scheduler = TurnScheduler()
    scheduler.queue_prompt("later", last_accepted=0, oldest_waiting=None)
    scheduler.steer("now")
    assert scheduler.next_turn(1) is Next.STEER
    assert [s.text for s in scheduler.pending.take_steers()] == ["now"]
    assert scheduler.next_turn(1) is Next.PROMPT  # message 1 came after "later"


def test_held_input_runs_nothing_and_holds_up_no_relayed_task_until_resumed():
    scheduler = TurnScheduler()
    scheduler.steer("steer")
    scheduler.queue_prompt("mine", last_accepted=5, oldest_waiting=None)
    scheduler.pending.hold()
    assert scheduler.next_turn(None) is None
    assert scheduler.next_turn(3) is Next.RELAY
    scheduler.pending.resume()
    assert scheduler.next_turn(3) is Next.STEER
    scheduler.pending.take_steers()
    assert scheduler.next_turn(3) is Next.RELAY  # its mark (5) survived the hold
    assert scheduler.next_turn(6) is Next.PROMPT


def test_a_steer_taken_back_and_sent_as_a_follow_up_takes_a_new_mark():
    scheduler = TurnScheduler()
    scheduler.steer("was steering")
    taken = scheduler.take_last()
    assert taken is not None and taken.text == "was steering" and scheduler.editing()
    scheduler.queue_prompt("was steering", last_accepted=4, oldest_waiting=None)
    assert not scheduler.editing()
    assert scheduler.next_turn(4) is Next.RELAY and scheduler.next_turn(5) is Next.PROMPT


# -- a goal's turns (/goal) ---------------------------------------------------------------


def test_a_goal_turn_runs_only_when_none_of_the_users_input_waits():
    scheduler = TurnScheduler()
    scheduler.goal_due = lambda: True
    assert scheduler.next_turn(None) is Next.GOAL
    scheduler.queue_prompt("mine", last_accepted=0, oldest_waiting=None)
    assert scheduler.next_turn(None) is Next.PROMPT
    scheduler.pop_prompt()
    scheduler.steer("left over")
    assert scheduler.next_turn(None) is Next.STEER


def test_a_goal_and_relayed_tasks_take_turns():
    scheduler = TurnScheduler()
    scheduler.goal_due = lambda: True
    ran = []
    for sequence in (1, 2, 3, 3, 3):  # relayed tasks keep arriving
        step = scheduler.next_turn(sequence)
        assert step is not None
        ran.append(step)
        if step is Next.GOAL:
            scheduler.goal_started()
        else:
            scheduler.relay_started()
    assert ran == [Next.GOAL, Next.RELAY, Next.GOAL, Next.RELAY, Next.GOAL]
    scheduler.goal_due = lambda: False
    assert scheduler.next_turn(3) is Next.RELAY
