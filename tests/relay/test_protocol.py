"""Golden bytes of the wire specification, framing and the flat-JSON parser."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcoder.relay.flat_json import _decode_checked, _flat_object_in_c
from zcoder.relay.framing import encode_frame, parse_header
from zcoder.relay.protocol import (
    STATES,
    STATUSES,
    Ack,
    Envelope,
    EnvelopeError,
    FrameError,
    ack_from_object,
    decode_flat_object,
    encode_flat_object,
    parse_ack,
    ping_request,
    validate_envelope,
)
from zcoder.relay.registry import Manifest, parse_manifest

SPEC_PING = (
    b'{"protocol":1,"type":"ping","message_id":"ping-9199-21976",'
    b'"target_instance_id":"9154-17962062554242","sender_instance_id":"9199-1796206255308319947"}'
)
SPEC_ENQUEUE = (
    b'{"protocol":1,"type":"enqueue","message_id":"9199-1796206255308319947-1",'
    b'"target_instance_id":"9154-17962062554242","sender_instance_id":"9199-1796206255308319947",'
    b'"sender_pid":9199,"sender_project":"sender-project","sender_workspace":"/tmp/zrt/sender-project",'
    b'"body":"hello from zsh\\nline 2","created_at":1796206255}'
)
SPEC_ACK = (
    b'{"protocol":1,"type":"ack","message_id":"9199-1796206255308319947-1","status":"accepted",'
    b'"queue_position":1,"state":"ready"}'
)
SPEC_MANIFEST = (
    b'{"protocol":1,"instance_id":"9097-1796206254283923470","pid":9097,"project":"peer-project",'
    b'"workspace":"/tmp/zrt/peer-project","session_id":"1_1","profile":"coding","model":"fixture-model",'
    b'"socket":"/tmp/zrt/registry/a-9097-1796206254283923470.sock","state":"ready","started_at":1796206254}'
)


def test_ping_request_matches_spec_bytes():
    assert (
        ping_request("ping-9199-21976", "9154-17962062554242", "9199-1796206255308319947")
        == SPEC_PING
    )


def test_enqueue_payload_matches_spec_bytes():
    envelope = Envelope(
        message_id="9199-1796206255308319947-1",
        target_instance_id="9154-17962062554242",
        sender_instance_id="9199-1796206255308319947",
        sender_pid=9199,
        sender_project="sender-project",
        sender_workspace="/tmp/zrt/sender-project",
        body="hello from zsh\nline 2",
        created_at=1796206255,
    )
    assert envelope.to_payload() == SPEC_ENQUEUE


def test_ack_matches_spec_bytes():
    ack = Ack("9199-1796206255308319947-1", "accepted", 1, "ready")
    assert ack.to_payload() == SPEC_ACK
    assert parse_ack(SPEC_ACK) == ack


def _generic_ack(message_id: str, status: str, position: int, state: str) -> bytes:
    """An ack's payload as encode_flat_object writes it (not by Ack's own fast path)."""
    return encode_flat_object(
        {
            "protocol": 1,
            "type": "ack",
            "message_id": message_id,
            "status": status,
            "queue_position": position,
            "state": state,
        }
    )


@given(
    message_id=st.one_of(
        st.text(max_size=120), st.from_regex(r"[A-Za-z0-9_.-]{1,100}", fullmatch=True)
    ),
    status=st.one_of(st.sampled_from(STATUSES), st.text(max_size=12)),
    position=st.integers(min_value=0, max_value=1 << 40),
    state=st.one_of(st.sampled_from(STATES), st.text(max_size=8)),
)
def test_ack_bytes_are_those_of_the_generic_encoder(message_id, status, position, state):
    """The ack's fast path writes exactly what encode_flat_object writes, for any ack."""
    ack = Ack(message_id, status, position, state)
    assert ack.to_payload() == _generic_ack(message_id, status, position, state)


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@given(
    ids=st.tuples(_TEXT, _TEXT, _TEXT),
    pid=st.integers(min_value=1, max_value=1 << 62),
    project=_TEXT,
    workspace=_TEXT,
    body=_TEXT,
    created_at=st.one_of(
        st.none(),
        st.integers(min_value=-(1 << 62), max_value=1 << 62),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    kind=st.sampled_from(("", "instance", "send", "unverified")),
    client=_TEXT,
)
def test_envelope_bytes_are_those_of_the_generic_encoder(
    ids, pid, project, workspace, body, created_at, kind, client
):
    """The envelope's fast path writes exactly what encode_flat_object writes."""
    envelope = Envelope(
        ids[0], ids[1], ids[2], pid, project, workspace, body, created_at, kind, client
    )
    members = {
        "protocol": 1,
        "type": "enqueue",
        "message_id": ids[0],
        "target_instance_id": ids[1],
        "sender_instance_id": ids[2],
        "sender_pid": pid,
        "sender_project": project,
        "sender_workspace": workspace,
        "body": body,
    }
    if created_at is not None:
        members["created_at"] = created_at
    if client:
        members["sender_client"] = client
    if kind:
        members["sender_kind"] = kind
    assert envelope.to_payload() == encode_flat_object(members)


def test_an_envelope_created_at_infinity_is_refused():
    """1e999 decodes to infinity, which JSON cannot hold: stored, it would be unreadable."""
    obj = decode_flat_object(
        b'{"message_id":"1-2-m","target_instance_id":"3-4","sender_instance_id":"1-2",'
        b'"sender_pid":1,"body":"x","created_at":1e999}'
    )
    with pytest.raises(EnvelopeError, match="created_at"):
        validate_envelope(obj, 100)


def _parsed_or_error(parse, payload: bytes) -> object:
    try:
        return parse(payload)
    except FrameError as exc:
        return type(exc)


@given(
    message_id=st.one_of(
        st.text(max_size=110), st.from_regex(r"[A-Za-z0-9_.-]{0,101}", fullmatch=True)
    ),
    status=st.one_of(st.sampled_from(STATUSES), st.from_regex(r"[a-z_]{1,21}", fullmatch=True)),
    position=st.integers(min_value=0, max_value=10**19),
    state=st.one_of(st.sampled_from(STATES), st.from_regex(r"[a-z]{1,11}", fullmatch=True)),
)
def test_an_ack_is_read_the_same_with_or_without_the_json_decoder(
    message_id, status, position, state
):
    """parse_ack reads canonical acks without the JSON decoder: exactly as the decoder
    would, including the acks it must refuse or correct."""
    payload = _generic_ack(message_id, status, position, state)
    by_json = _parsed_or_error(lambda data: ack_from_object(decode_flat_object(data)), payload)
    assert _parsed_or_error(parse_ack, payload) == by_json


def test_manifest_matches_spec_bytes_and_parses_back():
    manifest = Manifest(
        instance_id="9097-1796206254283923470",
        pid=9097,
        project="peer-project",
        workspace="/tmp/zrt/peer-project",
        session_id="1_1",
        profile="coding",
        model="fixture-model",
        socket="/tmp/zrt/registry/a-9097-1796206254283923470.sock",
        state="ready",
        started_at=1796206254,
    )
    assert manifest.to_payload() == SPEC_MANIFEST
    parsed = parse_manifest(
        SPEC_MANIFEST, Path("/tmp/zrt/registry"), "a-9097-1796206254283923470.json"
    )
    assert parsed == manifest


def test_frame_header_is_ascii_length_and_lf():
    assert encode_frame(b'{"a":1}', 65536) == b'ZCODER-AGENT/1 7\n{"a":1}'


def test_string_escapes_are_those_of_the_spec():
    payload = Ack('q"\\\b\f\n\r\t\x01é✓', "pong").to_payload()
    assert b'"q\\"\\\\\\b\\f\\n\\r\\t\\u0001\xc3\xa9\xe2\x9c\x93"' in payload


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"ZCODER-AGENT/1 7\n{", (7, 17)),
        (b"ZCODER-AGENT/1 007\n", (7, 19)),
        (b"ZCODER-AGENT/1 65536\n", (65536, 21)),
        (b"ZCODER", None),
        (b"ZCODER-AGENT/1 12", None),
        (b"", None),
    ],
)
def test_parse_header_accepts_and_waits(raw, expected):
    assert parse_header(raw, 65536) == expected


@pytest.mark.parametrize(
    "raw",
    [
        b"ZCODER-AGENT/1 0\n",
        b"ZCODER-AGENT/1 65537\n",
        b"ZCODER-AGENT/1 12\r\n",
        b"ZCODER-AGENT/1 -1\n",
        b"ZCODER-AGENT/1 1e3\n",
        b"ZCODER-AGENT/1 \n",
        b"ZCODER-AGENT/2 5\n",
        b"HTTP/1.1 200 OK\r\n",
        b"zcoder-agent/1 5\n",
        b"ZCODER-AGENT/1 " + b"0" * 60,
        b"ZCODER-AGENT/1  5\n",
    ],
)
def test_parse_header_rejects(raw):
    with pytest.raises(FrameError):
        parse_header(raw, 65536)


@pytest.mark.parametrize(
    "payload",
    [
        b"[]",
        b'"text"',
        b"1",
        b'{"a":{"b":1}}',
        b'{"a":[1]}',
        b'{"a":1,"a":2}',
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b"\xff\xfe",
        b'{"a":"\\ud800"}',
        b"{",
        b"",
    ],
)
def test_decode_flat_object_rejects(payload):
    with pytest.raises(FrameError):
        decode_flat_object(payload)


def test_decode_flat_object_accepts_scalars():
    obj = decode_flat_object(b'{"s":"x","i":1,"f":1.5,"t":true,"n":null}')
    assert obj == {"s": "x", "i": 1, "f": 1.5, "t": True, "n": None}


@given(st.binary(max_size=512))
def test_decode_flat_object_never_raises_anything_but_frame_error(data):
    with contextlib.suppress(FrameError):
        decode_flat_object(data)


@given(st.binary(max_size=128))
def test_parse_header_never_raises_anything_but_frame_error(data):
    try:
        result = parse_header(data, 65536)
    except FrameError:
        return
    if result is not None:
        length, header_len = result
        assert 1 <= length <= 65536
        assert data[header_len - 1 : header_len] == b"\n"


@given(
    st.dictionaries(
        st.text(max_size=8),
        st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
        max_size=6,
    )
)
def test_flat_objects_round_trip(obj):
    try:
        encoded = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return  # lone surrogates cannot be UTF-8 at all
    assert decode_flat_object(encoded) == obj


_FLAT_TEXTS = st.one_of(
    st.binary(max_size=256),
    st.dictionaries(
        st.text(max_size=8),
        st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none()),
        max_size=6,
    ).map(lambda obj: json.dumps(obj, separators=(",", ":")).encode()),
    st.lists(
        st.sampled_from(
            [b'{"a":1', b',"a":2', b',"b":{"c":1}', b',"d":[1]', b',"e":NaN', b',"f":"\\ud800"',
             b',"g":"\\u00e9"', b',"h":1e999', b" ", b"}", b"\n", b'"x"', b"]", b"[", b"\xff"]
        ),
        max_size=8,
    ).map(b"".join),
)  # fmt: skip


@given(_FLAT_TEXTS)
def test_the_decoder_in_c_answers_only_what_the_member_by_member_one_does(payload):
    # decode_flat_object tries the C scanner first (one call per payload, measured in
    # docs/performance.md): it may give up, but never accept what the checked way refuses,
    # nor decode anything otherwise.
    fast = _flat_object_in_c(payload)
    try:
        checked = _decode_checked(payload)
    except FrameError:
        assert fast is None
        return
    assert fast is None or fast == checked
    if fast is not None:
        assert [type(value) for value in fast.values()] == [
            type(value) for value in checked.values()
        ]


@pytest.mark.parametrize(
    "payload",
    [
        b'{"a":1,"a":2}',
        b'{"a":{"b":1}}',
        b'{"a":{"b":1,"b":2}}',
        b'{"a":[1]}',
        b'{"a":NaN}',
        b'{"a":"\\ud800"}',
        b' {"a":1}',
        b'{"a":1} ',
        b'{"a":1}x',
        b"[1]",
    ],
)
def test_the_decoder_in_c_leaves_every_doubtful_payload_to_the_checked_one(payload):
    assert _flat_object_in_c(payload) is None


def test_the_decoder_in_c_takes_a_plain_enqueue():
    payload = Envelope(
        "1-2-m", "3-4", "1-2", 1, "p", "/w", "body \u00e9 \u2603", 1764927000
    ).to_payload()
    assert _flat_object_in_c(payload) == _decode_checked(payload)
    assert _flat_object_in_c(payload) is not None
