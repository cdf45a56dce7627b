"""The relay's typed messages: each wire request class writes the bytes the encoders before
the classes wrote for the same values, and every message class (wire requests, listener
commands and events) has a handler row on each side it can arrive on."""

from __future__ import annotations

import dataclasses
import json

import pytest

from zcoder.relay import Relay
from zcoder.relay.control import (
    Configure,
    Event,
    ListenerCommand,
    Log,
    Message,
    MessageSent,
    Stop,
    decode,
)
from zcoder.relay.listener_process import ListenerProcess
from zcoder.relay.listener_service import ListenerService
from zcoder.relay.progress import Progress
from zcoder.relay.protocol import Ack, Envelope, Ping, Request
from zcoder.relay.receipts import Receipt
from zcoder.relay.receiver import Receiver
from zcoder.relay.watches import IdleNotice, Watch

# Written by the encoders as they were before the message classes (ping_request, and the
# to_payload of Envelope, Receipt and Ack at the commit before), for the same values.
OLD_BYTES: dict[str, tuple[object, bytes]] = {
    "ping": (
        Ping("ping-42-7", "42-1", "43-9"),
        b'{"protocol":1,"type":"ping","message_id":"ping-42-7","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9"}',
    ),
    "ping, escapes and non-ASCII": (
        Ping('ping-\u00e9\n"x', "42-1", "43-9"),
        b'{"protocol":1,"type":"ping","message_id":"ping-\xc3\xa9\\n\\"x",'
        b'"target_instance_id":"42-1","sender_instance_id":"43-9"}',
    ),
    "enqueue": (
        Envelope(
            "43-9-1",
            "42-1",
            "43-9",
            43,
            "proj \u00e9",
            "/tmp/w s",
            'line 1\nline\t2 \x01 "q" \\ \u2713 \U0001f600',
            1796206255,
        ),
        b'{"protocol":1,"type":"enqueue","message_id":"43-9-1","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"sender_project":"proj \xc3\xa9",'
        b'"sender_workspace":"/tmp/w s","body":"line 1\\nline\\t2 \\u0001 \\"q\\" \\\\ '
        b'\xe2\x9c\x93 \xf0\x9f\x98\x80","created_at":1796206255}',
    ),
    "enqueue, float time, client and kind": (
        Envelope(
            "43-9-2",
            "42-1",
            "43-9",
            43,
            "",
            "",
            "b",
            1796206255.5,
            sender_kind="send",
            sender_client="claude-code",
        ),
        b'{"protocol":1,"type":"enqueue","message_id":"43-9-2","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"sender_project":"","sender_workspace":"",'
        b'"body":"b","created_at":1796206255.5,"sender_client":"claude-code","sender_kind":"send"}',
    ),
    "enqueue without created_at": (
        Envelope("43-9-3", "42-1", "43-9", 43, "p", "/w", "b", None),
        b'{"protocol":1,"type":"enqueue","message_id":"43-9-3","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"sender_project":"p",'
        b'"sender_workspace":"/w","body":"b"}',
    ),
    "receipt": (
        Receipt(
            "42-1-r1", "43-9", "42-1", 42, "43-9-1", "completed", 'done: \u2713\n"ok"', 1796206300
        ),
        b'{"protocol":1,"type":"receipt","message_id":"42-1-r1","target_instance_id":"43-9",'
        b'"sender_instance_id":"42-1","sender_pid":42,"in_reply_to":"43-9-1",'
        b'"outcome":"completed","summary":"done: \xe2\x9c\x93\\n\\"ok\\"","created_at":1796206300}',
    ),
    "receipt without created_at": (
        Receipt("42-1-r2", "43-9", "42-1", 42, "43-9-2", "failed", "", None),
        b'{"protocol":1,"type":"receipt","message_id":"42-1-r2","target_instance_id":"43-9",'
        b'"sender_instance_id":"42-1","sender_pid":42,"in_reply_to":"43-9-2",'
        b'"outcome":"failed","summary":""}',
    ),
    "watch": (
        Watch("43-9-w1", "42-1", "43-9", 43, 1796206300),
        b'{"protocol":1,"type":"watch","message_id":"43-9-w1","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"created_at":1796206300}',
    ),
    "idle": (
        IdleNotice("42-1-i1", "43-9", "42-1", 42, "43-9-w1", 1796206301),
        b'{"protocol":1,"type":"idle","message_id":"42-1-i1","target_instance_id":"43-9",'
        b'"sender_instance_id":"42-1","sender_pid":42,"in_reply_to":"43-9-w1",'
        b'"created_at":1796206301}',
    ),
    "ack": (
        Ack("43-9-1", "accepted", 3, "busy"),
        b'{"protocol":1,"type":"ack","message_id":"43-9-1","status":"accepted",'
        b'"queue_position":3,"state":"busy"}',
    ),
    "ack with a reason": (
        Ack("", "invalid", 0, "ready", "body must be a non-empty string"),
        b'{"protocol":1,"type":"ack","message_id":"","status":"invalid","queue_position":0,'
        b'"state":"ready","reason":"body must be a non-empty string"}',
    ),
    "ack, an id outside the grammar": (
        Ack("\u00e9 x", "unsupported", 0, "paused"),
        b'{"protocol":1,"type":"ack","message_id":"\xc3\xa9 x","status":"unsupported",'
        b'"queue_position":0,"state":"paused"}',
    ),
}

# Issue 29's members and type, as they are first written: an enqueue that asks to steer (the
# member only then, after the others a sender writes), the ack that answers it, progress.
NEW_BYTES: dict[str, tuple[object, bytes]] = {
    "enqueue asking to steer": (
        Envelope("43-9-4", "42-1", "43-9", 43, "p", "/w", "b", 1796206255, delivery="steer"),
        b'{"protocol":1,"type":"enqueue","message_id":"43-9-4","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"sender_project":"p",'
        b'"sender_workspace":"/w","body":"b","created_at":1796206255,"delivery":"steer"}',
    ),
    "a steer as stored": (
        Envelope(
            "43-9-5", "42-1", "43-9", 43, "api", "/w", "b", None, "instance", delivery="steer"
        ),
        b'{"protocol":1,"type":"enqueue","message_id":"43-9-5","target_instance_id":"42-1",'
        b'"sender_instance_id":"43-9","sender_pid":43,"sender_project":"api",'
        b'"sender_workspace":"/w","body":"b","delivery":"steer","sender_kind":"instance"}',
    ),
    "ack of a steer": (
        Ack("43-9-4", "accepted", 1, "busy", delivery="steer"),
        b'{"protocol":1,"type":"ack","message_id":"43-9-4","status":"accepted",'
        b'"queue_position":1,"state":"busy","delivery":"steer"}',
    ),
    "ack of a steer that was queued": (
        Ack("43-9-4", "accepted", 2, "ready", delivery="queue"),
        b'{"protocol":1,"type":"ack","message_id":"43-9-4","status":"accepted",'
        b'"queue_position":2,"state":"ready","delivery":"queue"}',
    ),
    "progress": (
        Progress("42-1-p1", "43-9", "42-1", 42, "43-9-1", "started", 1796206300),
        b'{"protocol":1,"type":"progress","message_id":"42-1-p1","target_instance_id":"43-9",'
        b'"sender_instance_id":"42-1","sender_pid":42,"in_reply_to":"43-9-1",'
        b'"stage":"started","created_at":1796206300}',
    ),
}


def request_classes() -> list[type[Request]]:
    """Every concrete wire request class (one with a TYPE), found from the classes."""
    found: list[type[Request]] = []
    pending = list(Request.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "TYPE" in vars(cls):
            found.append(cls)
    return found


@pytest.mark.parametrize("name", list(OLD_BYTES))
def test_each_message_class_writes_the_old_bytes(name: str) -> None:
    message, old = OLD_BYTES[name]
    assert isinstance(message, Request | Ack)
    assert message.to_payload() == old


@pytest.mark.parametrize("name", list(NEW_BYTES))
def test_the_new_members_and_types_write_their_bytes(name: str) -> None:
    message, new = NEW_BYTES[name]
    assert isinstance(message, Request | Ack)
    assert message.to_payload() == new
    if isinstance(message, Envelope):  # the generic encoder writes the same bytes
        assert message._generic_payload() == new


def test_every_request_class_has_golden_bytes() -> None:
    covered = {type(message) for message, _ in [*OLD_BYTES.values(), *NEW_BYTES.values()]}
    assert set(request_classes()) <= covered


def test_every_request_type_has_a_row_in_the_receivers_table() -> None:
    types = [cls.TYPE for cls in request_classes()]
    assert len(types) == len(set(types)), "two request classes share a wire type"
    assert set(types) == set(Receiver.HANDLERS)


def sample(cls: type[Message]) -> Message:
    """An instance of ``cls`` with a value in every field, read from a line as a peer's is."""
    values = {f.name: "x" if f.type == "str" else 7 for f in dataclasses.fields(cls)}
    return cls.from_fields({"op": cls.OP, **values})


@pytest.mark.parametrize("cls", [*ListenerCommand.BY_OP.values(), *Event.BY_OP.values()])
def test_each_control_message_reads_back_from_its_line(cls: type[Message]) -> None:
    message = sample(cls)
    line = message.line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    decoded = json.loads(line)
    assert decoded["op"] == cls.OP
    assert (
        decode(decoded, ListenerCommand.BY_OP if issubclass(cls, ListenerCommand) else Event.BY_OP)
        == message
    )


def test_control_lines_keep_their_bytes() -> None:
    assert (
        MessageSent("43-9-1", "42-1").line()
        == b'{"op":"sent","message_id":"43-9-1","target":"42-1"}\n'
    )
    assert Configure({"instance_id": "42-1", "state": "ready"}).line() == (
        b'{"op":"config","instance_id":"42-1","state":"ready"}\n'
    )
    assert Stop().line() == b'{"op":"stop"}\n'
    assert Log(30, "zcoder.relay", "caf\u00e9").line() == (
        b'{"op":"log","level":30,"name":"zcoder.relay","message":"caf\\u00e9"}\n'
    )


def test_every_command_has_a_row_in_the_listener_process() -> None:
    assert set(ListenerService.HANDLERS) == set(ListenerCommand.BY_OP.values())


def test_every_event_has_a_row_in_zcoders_process() -> None:
    assert set(ListenerProcess.HANDLERS) == set(Event.BY_OP.values())


def test_every_request_handed_on_has_a_row_in_zcoders_process() -> None:
    handed_on = {cls.TYPE for cls in request_classes() if cls.TO_PARENT}
    assert handed_on == set(Relay.FORWARDED)
    assert {Receipt.TYPE, Progress.TYPE} <= handed_on


def test_a_second_message_with_the_same_op_is_refused() -> None:
    with pytest.raises(TypeError, match="'sent'"):

        class Again(ListenerCommand, op="sent"):
            """A second declaration of a command that exists."""


def test_a_command_without_a_field_it_needs_is_refused_not_raised() -> None:
    service = ListenerService.__new__(ListenerService)  # no handler runs for these lines
    assert service.on_command({"op": "sent", "message_id": "43-9-1"}) == {
        "error": "sent without target"
    }
    assert service.on_command({"op": "bogus"}) == {"error": "unknown command 'bogus'"}


class _Untouched:
    """A spool or sender check that a request answered before rule 8 must never reach."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the decision reached the spool ({name})")

    def __call__(self, *args: object) -> str | None:
        raise AssertionError("the decision reached the sender check")


def _receiver() -> Receiver:
    return Receiver(
        "42-1",
        _Untouched(),  # type: ignore[arg-type]
        max_message_chars=100,
        max_queue=16,
        state=lambda: "busy",
        sender_check=_Untouched(),
    )


def _decide(**members: object) -> Ack:
    obj = {"protocol": 1, "message_id": "43-9-1", "target_instance_id": "42-1", **members}
    payload = json.dumps({key: value for key, value in obj.items() if value is not ...})
    return _receiver().decide(payload.encode(), None).ack


NO_ROW: list[object] = [..., None, 5, 1.5, True, "", "PING", "Enqueue", "ack", "broadcast"]
NO_ROW += ["_ping", "_enqueue", "HANDLERS", "__class__", "__init__"]  # names in Receiver
NO_ROW += ["receipt", "progress"]  # no receipt book here: neither, as in zcoder.zsh
NO_ROW += ["watch", "idle"]  # nor watches


@pytest.mark.parametrize("kind", NO_ROW)
def test_a_type_without_a_row_is_unsupported_with_its_id_echoed(kind: object) -> None:
    ack = _decide(type=kind, sender_pid=43, body="x")
    assert (ack.status, ack.message_id, ack.state) == ("unsupported", "43-9-1", "busy")


def test_the_rules_before_the_table_still_answer_first() -> None:
    assert _decide(type="enqueue", protocol=2).status == "unsupported"
    assert _decide(type="broadcast", target_instance_id="42-2").status == "wrong_target"
    assert _decide(type="ping", target_instance_id="42-2").status == "wrong_target"
    # A ping is answered from its row; nothing else of it is looked at.
    pong = _decide(type="ping", message_id="not a valid id!", sender_instance_id=[])
    assert pong.status == "invalid"  # a nested member: rule 1, before any row
    assert _decide(type="ping", message_id="not a valid id!", body=5).status == "pong"
    # The enqueue row starts at rule 6.
    refused = _decide(type="enqueue", message_id="bad id")
    assert (refused.status, refused.message_id) == ("invalid", "")
