"""Done receipts and remembered message ids are bounded, by count and by age."""

from __future__ import annotations

from pathlib import Path

import zcoder.relay.spool as spool_module
from tests.relay.conftest import spool_envelope
from zcoder.relay.protocol import Envelope
from zcoder.relay.spool import DONE_RECEIPTS_MAX_AGE, ClaimedMessage, Spool


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _envelope(n: int) -> Envelope:
    return spool_envelope(n, target="9-1", sender="7-1")


def _run_one(spool: Spool, n: int) -> None:
    envelope = _envelope(n)
    status, _ = spool.store(envelope, envelope.to_payload(), max_queue=10)
    assert status == "accepted"
    claimed = spool.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    spool.complete(claimed)


def _spool(tmp_path: Path, clock: Clock) -> Spool:
    spool = Spool(tmp_path / "relay", "9-1", 65536, 20000, clock=clock)
    spool.create()
    return spool


def test_done_receipts_are_bounded_by_count(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(spool_module, "DONE_RECEIPTS_MAX", 5)
    clock = Clock()
    spool = _spool(tmp_path, clock)
    for n in range(12):
        _run_one(spool, n)
        clock.now += 1
    assert spool.done_receipts() == 5
    done = sorted(p.name for p in (tmp_path / "relay" / "done").iterdir())
    assert [name.split("-", 1)[1] for name in done] == [f"7-1-{n}.json" for n in range(7, 12)]
    # The newest are still duplicates; the forgotten oldest are not remembered.
    assert spool.is_duplicate("7-1-11")
    assert not spool.is_duplicate("7-1-0")


def test_done_receipts_are_bounded_by_age(tmp_path: Path) -> None:
    clock = Clock()
    spool = _spool(tmp_path, clock)
    for n in range(3):
        _run_one(spool, n)
    assert spool.done_receipts() == 3 and spool.is_duplicate("7-1-0")
    clock.now += DONE_RECEIPTS_MAX_AGE + 1
    _run_one(spool, 3)
    assert spool.done_receipts() == 1
    assert not spool.is_duplicate("7-1-0")
    assert spool.is_duplicate("7-1-3")
