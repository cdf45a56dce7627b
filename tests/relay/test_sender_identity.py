"""Who may speak as a sender: message ids belong to their sender, and only the sender's
own process (or a descendant in its session) may connect as it."""

from __future__ import annotations

import pytest

from tests.relay.wire import enqueue_obj, send_json

pytestmark = pytest.mark.timeout(60)


def test_a_message_id_belongs_to_its_sender(make_relay):
    receiver = make_relay("receiver")
    alpha = make_relay("alpha")
    beta = make_relay("beta")  # registered and live: only its id prefix is wrong
    taken = f"{alpha.instance_id}-7"
    forged = enqueue_obj(receiver, beta, "x", message_id=taken)
    ack = send_json(receiver.socket_path, forged)
    assert (ack["status"], ack["message_id"]) == ("invalid", taken)
    assert receiver.claim_one() is None  # nothing stored

    # The id was not taken: its owner's message with it is accepted, not a duplicate.
    ack = send_json(receiver.socket_path, enqueue_obj(receiver, alpha, "7"))
    assert (ack["status"], ack["message_id"]) == ("accepted", taken)
    claimed = receiver.claim_one()
    assert claimed is not None and claimed.envelope.sender_instance_id == alpha.instance_id


def test_our_own_sender_uses_ids_of_its_own(make_relay):
    receiver = make_relay("receiver")
    alpha = make_relay("alpha")
    first = alpha.send(receiver.instance_id, "one")
    second = alpha.send(receiver.instance_id, "two")
    assert (first.status, second.status) == ("accepted", "accepted")
    assert (first.message_id, second.message_id) == (
        f"{alpha.instance_id}-1",
        f"{alpha.instance_id}-2",
    )
