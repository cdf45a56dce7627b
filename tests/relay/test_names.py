"""Friendly names: validation, the manifest's optional `name`, collisions, finding a peer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.relay.conftest import RelayFactory
from zcoder.relay.display import peer_list_for_model, peer_table
from zcoder.relay.names import (
    BadName,
    check_name,
    default_name,
    display_names,
    name_of,
    resolve_target,
)
from zcoder.relay.registry import Manifest, parse_manifest


def _peer(instance_id: str, project: str, name: str = "", pid: int = 0) -> Manifest:
    return Manifest(
        instance_id=instance_id,
        pid=pid or int(instance_id.split("-", maxsplit=1)[0]),
        project=project,
        workspace=f"/w/{project}",
        session_id="",
        profile="coding",
        model="m",
        socket=f"/r/a-{instance_id}.sock",
        state="ready",
        started_at=1,
        name=name,
    )


@pytest.mark.parametrize("good", ["api", "web-2", "api.v2", "A_b", "データ", "x" * 40])
def test_usable_names(good: str) -> None:
    assert check_name(f"  {good} ") == good


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "two words", "-dash", "_under", "x" * 41, "a\x1bb", "a\u200bb", "a/b", "a#1"],
)
def test_unusable_names_are_refused_with_the_reason(bad: str) -> None:
    with pytest.raises(BadName):
        check_name(bad)


def test_the_default_name_is_the_project_made_usable() -> None:
    assert default_name("my project") == "my-project"
    assert default_name("--x--") == "x"
    assert default_name("!!!") == "zcoder"
    assert default_name("p" * 60) == "p" * 40


def test_the_manifest_carries_a_name_as_one_scalar_member_after_the_specs() -> None:
    peer = _peer("42-1", "proj", name="api")
    payload = json.loads(peer.to_payload())
    assert list(payload)[-1] == "name" and payload["name"] == "api"
    assert all(not isinstance(value, (dict, list)) for value in payload.values())
    # Without a name the manifest is exactly the spec's (what zcoder.zsh writes).
    assert "name" not in json.loads(_peer("42-1", "proj").to_payload())


def test_a_manifest_without_name_or_with_an_odd_one_is_still_accepted() -> None:
    registry = Path("/r")
    zsh_like = _peer("1700000000123-4", "legacy", pid=4242)
    parsed = parse_manifest(zsh_like.to_payload(), registry, "a-1700000000123-4.json")
    assert parsed.name == "" and name_of(parsed) == "legacy"
    odd = json.loads(zsh_like.to_payload())
    odd["name"] = 7
    parsed = parse_manifest(json.dumps(odd).encode(), registry, "a-1700000000123-4.json")
    assert parsed.name == ""
    hostile = dataclasses.replace(zsh_like, name="a\x1b[2Jb")
    assert name_of(hostile) == "legacy"  # an unusable self-reported name is not shown


def test_colliding_names_are_shown_with_their_pid() -> None:
    peers = [_peer("10-1", "a", "api"), _peer("20-1", "b", "API"), _peer("30-1", "c", "web")]
    assert display_names(peers) == {"10-1": "api#10", "20-1": "API#20", "30-1": "web"}
    table = peer_table(peers)
    assert table.splitlines()[0].startswith("NAME")
    assert "api#10" in table and "web " in table


def test_a_target_is_an_exact_id_or_a_unique_name_or_name_and_pid() -> None:
    peers = [_peer("10-1", "a", "api"), _peer("20-1", "b", "api"), _peer("30-1", "shop")]
    assert resolve_target(peers, "30-1").peer == peers[2]
    assert resolve_target(peers, "shop").peer == peers[2]  # no name: its project
    assert resolve_target(peers, "SHOP").peer == peers[2]
    ambiguous = resolve_target(peers, "api")
    assert ambiguous.peer is None and "ambiguous" in ambiguous.problem
    assert len(ambiguous.candidates) == 2
    assert all("10-1" in c or "20-1" in c for c in ambiguous.candidates)
    assert resolve_target(peers, "api#20").peer == peers[1]
    missing = resolve_target(peers, "nobody")
    assert missing.peer is None and not missing.candidates


def test_the_model_sees_a_chosen_name_beside_the_project() -> None:
    text = peer_list_for_model([_peer("10-1", "backend", "api"), _peer("20-1", "shop")])
    assert "api (backend) — pid 10, ready, id 10-1" in text
    assert "shop — pid 20, ready, id 20-1" in text


def test_a_relay_publishes_its_name_and_a_rename_at_once(
    make_relay: RelayFactory, registry: Path
) -> None:
    caller = make_relay("caller")
    named = make_relay("alpha")
    named.refresh_manifest(name="api")
    (peer,) = caller.discover().peers
    assert peer.name == "api"
    named.refresh_manifest(name="payments")
    (peer,) = caller.discover().peers
    assert peer.name == "payments"
    assert json.loads((registry / f"a-{named.instance_id}.json").read_text())["name"] == (
        "payments"
    )


def test_the_table_in_a_narrow_terminal_takes_three_short_lines_a_peer() -> None:
    peers = [_peer("11524-2483981955515353233", "billing"), _peer("12687-38571", "web\x1b[2J")]
    table = peer_table(peers)
    assert peer_table(peers, width=200) == table  # it fits: the table
    narrow = peer_table(peers, width=40)
    assert narrow.splitlines() == [
        "billing · pid 11524 · ready",  # its name is its project: said once
        "  id 11524-2483981955515353233",
        "  /w/billing",
        "web--2J (web\\e[2J) · pid 12687 · ready",  # control bytes made visible
        "  id 12687-38571",
        "  /w/web\\e[2J",
    ]
    assert all(len(line) <= 40 for line in narrow.splitlines())
