"""Trust per peer: accept, hold or refuse, per sender workspace, kept across runs."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from tests.relay.conftest import RelayFactory
from tests.relay.wire import enqueue_obj, send_json, send_json_with_reason
from zcoder.relay import ClaimedMessage
from zcoder.relay.receiver import REFUSED_SENDER
from zcoder.relay.settings import Inbound
from zcoder.relay.trust import (
    BLOCK,
    TRUST,
    TRUST_FILE,
    TrustBook,
    TrustError,
    is_within,
    normal_path,
)


def test_policies_are_kept_per_workspace_in_a_private_file(tmp_path: Path) -> None:
    book = TrustBook(tmp_path / "home", Inbound.HOLD)
    assert book.policy_for("/w/a", trusted=True) is Inbound.HOLD
    book.set("/w/a", TRUST)
    book.set("/w/b", BLOCK)
    path = tmp_path / "home" / TRUST_FILE
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = TrustBook(tmp_path / "home", Inbound.ACCEPT)  # another run, another default
    assert again.policy_for("/w/a", trusted=True) is Inbound.ACCEPT
    assert again.policy_for("/w/b", trusted=True) is Inbound.REFUSE
    assert again.policy_for("/w/c", trusted=True) is Inbound.ACCEPT
    again.set("/w/b", None)
    assert book.policy_for("/w/b", trusted=True) is Inbound.HOLD  # the first book sees the change
    assert json.loads(path.read_text())["peers"] == {"/w/a": "trust"}


def test_an_unusable_file_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / TRUST_FILE).write_text("{not json")
    book = TrustBook(home, Inbound.ACCEPT)
    assert book.policy_for("/w/a", trusted=True) is Inbound.ACCEPT
    assert book.problem is not None and "unusable" in book.problem
    try:
        book.set("/w/a", BLOCK)
    except TrustError as exc:
        assert "fix or remove it" in str(exc)
    else:
        raise AssertionError("a corrupt policy file was overwritten")
    assert (home / TRUST_FILE).read_text() == "{not json"


def test_hold_keeps_a_message_out_of_the_queue_until_run_or_discarded(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    receiver = make_relay("receiver", env={**relay_env, "ZCODER_RELAY_INBOUND": "hold"})
    sender = make_relay("sender")
    assert receiver.instance_id is not None
    first = sender.send(receiver.instance_id, "first task")
    second = sender.send(receiver.instance_id, "second task")
    assert first.status == second.status == "accepted"  # queued, as the sender is told
    assert receiver.claim_one() is None  # held: nothing runs by itself
    held = receiver.held()
    assert [m.envelope.body for m in held if isinstance(m, ClaimedMessage)] == [
        "first task",
        "second task",
    ]
    assert receiver.status().queued == 2
    # Run the second now; discard the first.
    names = [m.path.name for m in held if isinstance(m, ClaimedMessage)]
    assert receiver.release(names[1])
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "second task"
    receiver.complete(claimed)
    assert receiver.discard(names[0])
    assert receiver.held() == [] and receiver.status().queued == 0
    # A retry of the discarded message would be a duplicate, never run.
    assert first.message_id == f"{sender.instance_id}-1"
    retry = enqueue_obj(receiver, sender, "1", body="first task")
    assert receiver.socket_path is not None
    assert send_json(receiver.socket_path, retry)["status"] == "duplicate"


def test_refuse_and_block_are_answered_paused_but_never_told_as_a_pause(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    """The wire has no status for "refused": the ack says ``paused`` (zcoder.zsh knows no
    other word), its state says the receiver is not, and its reason says what happened; the
    sender is told that, not that the receiver is paused. Trust wins over the default."""
    home = short_dir / "home"
    receiver = make_relay(
        "receiver",
        env={**relay_env, "ZCODER_RELAY_INBOUND": "refuse"},
        home=home,
    )
    friend, stranger = make_relay("friend", interactive=True), make_relay("stranger")
    assert receiver.instance_id is not None
    refused = stranger.send(receiver.instance_id, "let me in")
    told = "receiver did not accept the message: " + REFUSED_SENDER
    assert (refused.status, refused.text) == ("paused", told)
    assert receiver.socket_path is not None
    ack = send_json_with_reason(receiver.socket_path, enqueue_obj(receiver, stranger, "raw"))
    assert (ack["status"], ack["state"], ack["reason"]) == ("paused", "ready", REFUSED_SENDER)
    receiver.trust.set(str(friend.workspace), TRUST)
    assert friend.send(receiver.instance_id, "hello").status == "accepted"
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "hello"
    receiver.complete(claimed)
    # Block, through another process's book on the same file: seen at the next message.
    TrustBook(home, Inbound.ACCEPT).set(str(friend.workspace), BLOCK)
    blocked = friend.send(receiver.instance_id, "again")
    assert (blocked.status, blocked.text) == ("paused", told)  # the same words: no more
    assert receiver.claim_one() is None
    # Really paused, the spec's words, and no reason.
    receiver.pause()
    paused = friend.send(receiver.instance_id, "paused now")
    assert paused.text == "receiver is paused and did not accept the message"
    assert os.path.exists(home / TRUST_FILE)


def test_a_block_covers_the_tree_component_by_component_and_trust_needs_an_instance(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    real = tmp_path / "w"
    (real / "a" / "deep").mkdir(parents=True)
    (real / "ab").mkdir()
    (tmp_path / "link").symlink_to(real / "a")
    book = TrustBook(home, Inbound.HOLD)
    book.set(str(real / "a") + "/", BLOCK)  # stored normalised
    book.set(str(real / "ab"), TRUST)
    refuse, hold, accept = Inbound.REFUSE, Inbound.HOLD, Inbound.ACCEPT
    cases = {
        str(real / "a"): refuse,
        str(real / "a" / "deep"): refuse,
        str(real / "a" / "not-yet-made" / "x"): refuse,
        str(real / "ab" / ".." / "a" / "deep"): refuse,
        str(tmp_path / "link" / "deep"): refuse,  # symlinks resolved
        str(real / "ab"): accept,  # a sibling sharing a prefix is not inside
        str(real / "ab" / "sub"): hold,  # trust is for exactly that workspace
        str(real): hold,
        "relative/a": hold,
    }
    for workspace, expected in cases.items():
        assert book.policy_for(workspace, trusted=True) is expected, workspace
    # Not a proven instance: never trusted, still blocked, whatever it claims.
    assert book.policy_for(str(real / "ab"), trusted=False) is hold
    assert book.policy_for(str(real / "ab"), trusted=True, claims=[str(real / "a")]) is refuse
    # Forget, under another spelling of the same place, drops it.
    book.set(str(real / "ab" / ".." / "a"), None)
    assert book.policy_for(str(real / "a"), trusted=True) is hold
    assert json.loads((home / TRUST_FILE).read_text())["peers"] == {str(real / "ab"): "trust"}


def test_trusts_only_a_proven_instance_in_a_trusted_workspace_not_blocked(
    tmp_path: Path,
) -> None:
    """What a relayed turn's edits go by (ZCODER_RELAY_EDITS): with the default ACCEPT,
    ``policy_for`` accepts everyone, so trust is its own question."""
    home = tmp_path / "home"
    (tmp_path / "w" / "friend").mkdir(parents=True)
    (tmp_path / "w" / "stranger").mkdir()
    friend, stranger = str(tmp_path / "w" / "friend"), str(tmp_path / "w" / "stranger")
    book = TrustBook(home, Inbound.ACCEPT)
    assert not book.trusts(friend, proven=True)  # no policies at all
    book.set(friend, TRUST)
    assert book.trusts(friend, proven=True)
    assert book.trusts(friend + "/sub/..", proven=True)  # another spelling of it
    assert not book.trusts(friend, proven=False)  # zcoder send, a relay-only peer
    assert not book.trusts(stranger, proven=True)
    assert not book.trusts(friend + "/sub", proven=True)  # exactly that workspace
    TrustBook(home, Inbound.ACCEPT).set(
        str(tmp_path / "w"), BLOCK
    )  # another instance's /agents block
    assert not book.trusts(friend, proven=True)


_COMPONENT = st.sampled_from(["a", "ab", "b", "a.b", "a-b", ".", "..", "", "x y"])


@given(st.lists(_COMPONENT, max_size=6), st.lists(_COMPONENT, max_size=6))
def test_within_is_a_component_prefix_of_the_normalised_path(
    path: list[str], tree: list[str]
) -> None:
    # Paths under a directory that does not exist: normalised, nothing to resolve.
    root = "/nonexistent-zcoder-test"
    p = normal_path(root + "/" + "/".join(path))
    t = normal_path(root + "/" + "/".join(tree))
    assert p is not None and t is not None
    assert p == PurePosixPath(os.path.normpath(root + "/" + "/".join(path)))
    # Within: the two paths' common path is the tree (never a mere string prefix: "/…/ab"
    # is not within "/…/a").
    assert is_within(p, t) is (os.path.commonpath([str(p), str(t)]) == str(t))
