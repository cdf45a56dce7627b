"""Guard gaps of issue 19, class by class: each table holds spellings of one way to destroy
a home, the machine or the workspace that the guard used to allow or only warn about, and
the ordinary commands of the same shape it must keep allowing."""

from __future__ import annotations

import pytest

from tests.tools.test_guard_blind_spots import cases
from zcoder.tools import Verdict, check_command

WORKSPACE = "/srv/work/project"


def verdict(command: str) -> Verdict:
    return check_command(command, WORKSPACE).verdict


# What find prints is every path below its starting points, unless a test selects some:
# handed to a deleter by xargs or parallel, it is deleted as by find -exec.
FIND_INTO_XARGS = [
    "find ~ -print0 | xargs -0 rm -rf",
    "find ~ | xargs rm -rf",
    "find / -print0 | xargs -0 rm -rf",
    "find ~/.. | xargs -I{} rm -rf {}",
    "find ~ -type f | xargs rm",
    "sudo find /etc | sudo xargs rm -rf",
    "find ~ | parallel rm -rf",
    "find . -print0 | xargs -0 rm -rf",
    "find ~ -print0 | sort -z | xargs -0 rm -rf",
    "find ~ -delete -name x -print0 | xargs -0 shred -u",
]


ORDINARY_FIND_INTO_XARGS = [
    "find . -name '*.pyc' -print0 | xargs -0 rm -f",
    "find ~ -name '*.tmp' | xargs rm -f",
    "find /var/log -name '*.gz' -mtime +30 | xargs rm -f",
    "find . -type f | xargs grep -n TODO",
    "find ~ -maxdepth 1 | xargs ls -ld",
    "find build -type f -print0 | xargs -0 rm -f",
    "find ~/.cache/pip -print0 | xargs -0 rm -rf",
]


# A git alias whose value starts with "!" runs in a shell when `git NAME` is run; one
# without it runs `git VALUE`. Given with -c it runs now; set with `git config`, later.
GIT_ALIASES = [
    "git -c alias.x='!rm -rf ~' x",
    'git -c alias.x="!rm -rf /" x',
    "git -c alias.wipe='!f() { rm -rf ~; }; f' wipe",
    "git -c alias.x='!rm -rf ~'",
    "git config --global alias.st '!rm -rf ~'",
    "git config alias.x '!sh -c \"rm -rf /etc\"'",
    "git config set --global alias.x '!rm -rf ~'",
    "git -C ~ -c alias.c='clean -fdx' c",
    "git -c alias.c='clean -ffdx' -C / c",
    "git -c Alias.X='!rm -rf ~' x",
]


ORDINARY_GIT_ALIASES = [
    "git -c alias.st=status st",
    "git -c alias.x='!echo hello' x",
    "git config --global alias.co checkout",
    "git config --global alias.lg 'log --graph --oneline'",
    "git config alias.up '!git fetch && git rebase'",
    "git -c alias.c='clean -fdx' c",
    "git config --get alias.st",
    "git config --global --unset alias.st",
]


# The tables, as in test_guard_blind_spots: each command a case named after its class
# (``git-aliases-3``).
MUST_BE_REFUSED = {"find-into-xargs": FIND_INTO_XARGS, "git-aliases": GIT_ALIASES}
MUST_BE_ALLOWED = {
    "ordinary-find-into-xargs": ORDINARY_FIND_INTO_XARGS,
    "ordinary-git-aliases": ORDINARY_GIT_ALIASES,
}


@pytest.mark.parametrize("command", cases(MUST_BE_REFUSED))
def test_what_find_prints_into_a_deleter_and_git_aliases_are_refused(command: str) -> None:
    assert verdict(command) is Verdict.REFUSE, command


@pytest.mark.parametrize("command", cases(MUST_BE_ALLOWED))
def test_ordinary_commands_of_the_same_shapes_are_allowed(command: str) -> None:
    assert verdict(command) is Verdict.ALLOW, check_command(command, WORKSPACE).reason


@pytest.mark.parametrize(
    ("command", "named"),
    [
        pytest.param(
            "find ~ -print0 | xargs -0 rm -rf",
            ["find ~", "a home directory", "xargs"],
            id="the-paths-came-from-find",
        ),
        pytest.param(
            "git config --global alias.st '!rm -rf ~'",
            ["a home directory", "alias.st"],
            id="the-git-alias",
        ),
    ],
)
def test_the_refusal_names_where_the_danger_came_from(command: str, named: list[str]) -> None:
    reason = check_command(command, WORKSPACE).reason or ""
    for words in named:
        assert words in reason, reason
