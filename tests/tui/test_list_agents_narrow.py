"""/list-agents in the real app: the table where it fits, three short lines a peer where
it would wrap (a 60-column terminal)."""

from __future__ import annotations

import pytest

from tests.tui.conftest import submit, transcript_text, wait_until


@pytest.mark.parametrize(("size", "table"), [((60, 15), False), ((160, 40), True)])
async def test_the_peer_list_fits_the_transcript(make_config, app_factory, sender, size, table):
    app = app_factory(make_config())
    async with app.run_test(size=size) as pilot:
        await submit(pilot, app, "/list-agents")
        await wait_until(pilot, lambda: sender.instance_id in transcript_text(app))
        text = transcript_text(app)
    assert ("WORKSPACE" in text) is table
    assert str(sender.workspace) in text and "sender-project" in text
    assert (f"  id {sender.instance_id}" in text) is not table
