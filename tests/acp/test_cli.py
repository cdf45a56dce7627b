"""``--acp`` on the command line: what does not go with it is a usage error, said on
standard error before anything starts (standard output stays empty)."""

from __future__ import annotations

import pytest

from tests.test_oneshot import Env, zcoder


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (("--prompt", "hi"), "--prompt"),
        (("--json",), "--output-format"),
        (("--resume", "abc"), "--resume"),
        (("-w", "."), "-w/--workspace"),
    ],
)
def test_flags_of_one_turn_or_one_workspace_do_not_go_with_acp(
    env: Env, extra: tuple[str, ...], flag: str
) -> None:
    done = zcoder(env, "--acp", *extra)
    assert done.returncode == 2
    assert f"zcoder: {flag} does not go with --acp" in done.stderr
    assert done.stdout == ""


def test_help_shows_acp(env: Env) -> None:
    done = zcoder(env, "--help")
    assert "       zcoder --acp [options]\n" in done.stdout
    assert "--acp " in done.stdout and "Agent Client Protocol" in done.stdout
