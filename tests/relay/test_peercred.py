"""The process checks behind rule 8: who is the sender, or its descendant in its session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from zcoder.relay.peercred import ProcessStats, is_same_or_descendant, is_sender_in_its_session

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc"),
]

# Waits for its stdin to close; the optional argument is written to its own comm first.
CHILD = """
import sys
if len(sys.argv) > 1:
    with open("/proc/self/comm", "w") as comm:
        comm.write(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
"""


class Child:
    def __init__(self, *args: str, new_session: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=new_session,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == b"ready\n"
        self.pid = self.proc.pid

    def exit_unreaped(self) -> None:
        """Let it exit, and wait until it has, without reaping it: a zombie."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def children() -> Iterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.close()


def test_the_sender_itself_is_accepted():
    assert is_sender_in_its_session(os.getpid(), os.getpid())


def test_a_child_in_the_senders_session_is_accepted(children):
    child = Child()
    children.append(child)
    assert is_sender_in_its_session(child.pid, os.getpid())
    assert not is_sender_in_its_session(os.getpid(), child.pid)  # an ancestor is not


def test_a_child_in_a_new_session_is_refused(children):
    child = Child(new_session=True)
    children.append(child)
    assert os.getsid(child.pid) != os.getsid(os.getpid())
    assert is_same_or_descendant(child.pid, os.getpid())  # a descendant, all the same
    assert not is_sender_in_its_session(child.pid, os.getpid())


def test_a_child_that_exited_is_refused_before_and_after_it_is_reaped(children):
    child = Child()
    children.append(child)
    child.exit_unreaped()
    assert is_same_or_descendant(child.pid, os.getpid())  # the zombie still has its parent
    assert not is_sender_in_its_session(child.pid, os.getpid())
    child.close()
    assert not is_sender_in_its_session(child.pid, os.getpid())


def test_a_sender_that_is_gone_refuses_everyone(children):
    child = Child()
    children.append(child)
    child.close()
    assert not is_sender_in_its_session(os.getpid(), child.pid)


def test_a_command_name_with_parentheses_and_states_does_not_confuse_the_check(children):
    child = Child("x) Z 1 1 1 1")  # what a naive split at the first ")" would read
    children.append(child)
    with open(f"/proc/{child.pid}/comm") as comm:
        assert comm.read() == "x) Z 1 1 1 1\n"
    assert is_sender_in_its_session(child.pid, os.getpid())


def test_impossible_pids_are_refused():
    assert not is_sender_in_its_session(0, os.getpid())
    assert not is_sender_in_its_session(-1, os.getpid())
    assert not is_sender_in_its_session(os.getpid(), 0)
    assert not is_sender_in_its_session(os.getpid(), 10**30)  # a pid no kernel has


# -- the listener's kept descriptors (ProcessStats) ---------------------------------------


def _stat_fds() -> int:
    """This process's descriptors open on some /proc/<pid>/stat."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target.startswith("/proc/") and target.endswith("/stat")
    return count


def test_kept_descriptors_see_a_sender_exit_and_are_let_go_once_it_is_reaped(children):
    child = Child()
    children.append(child)
    stats = ProcessStats()
    assert _stat_fds() == 0
    for _ in range(3):  # the first check opens its stat; the next ones read it again
        assert is_sender_in_its_session(child.pid, child.pid, stats.fields)
    assert _stat_fds() == 1
    child.exit_unreaped()
    assert not is_sender_in_its_session(child.pid, child.pid, stats.fields)  # a zombie
    child.close()
    assert not is_sender_in_its_session(child.pid, child.pid, stats.fields)  # reaped
    assert _stat_fds() == 0  # nothing kept for a process that is gone
    stats.close()


def test_kept_descriptors_are_bounded_and_closed(children):
    stats = ProcessStats(limit=2)
    for _ in range(3):
        child = Child()
        children.append(child)
        assert is_sender_in_its_session(child.pid, os.getpid(), stats.fields)
        assert 1 <= _stat_fds() <= 2
    stats.close()
    assert _stat_fds() == 0


def test_kept_descriptors_give_the_same_answers_as_a_fresh_read(children):
    child = Child(new_session=True)
    children.append(child)
    stats = ProcessStats()
    for pid, sender in ((child.pid, os.getpid()), (os.getpid(), child.pid), (child.pid, child.pid)):
        fresh = is_sender_in_its_session(pid, sender)
        assert is_sender_in_its_session(pid, sender, stats.fields) == fresh
        assert is_sender_in_its_session(pid, sender, stats.fields) == fresh  # kept, read again
    stats.close()
