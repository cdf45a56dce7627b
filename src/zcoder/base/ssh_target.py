"""Where ``zcoder --connect`` (and ``zcoder agents --host``, ``zcoder send HOST:NAME``) go,
and the OpenSSH command that takes them there: one command line for all of them.

``[user@]host[:port][/path]`` names the machine, the login and the workspace. zcoder
opens no port and keeps no credential: the connection is the user's own ``ssh`` client,
with the user's own configuration (``~/.ssh/config``, agent, known hosts), in batch mode
(a password prompt would fight the TUI for the terminal; a key or an agent is needed),
running the remote zcoder's ACP agent as its command. What authenticates, encrypts and
gives up is SSH's business.

``ZCODER_SSH`` is the ssh command (default ``ssh``; e.g. ``ssh -F ~/.ssh/other_config``),
``ZCODER_REMOTE_COMMAND`` the command the remote shell runs for ``--connect`` (default
``zcoder --acp``: a remote zcoder installed somewhere not on the login shell's PATH is
named here); the relay's commands give their own (zcoder.relay.hosts).

A host or a login is a word of letters, digits, ``.``, ``_`` and ``-`` (not first), or an
IPv6 address in brackets: it is an argument of ssh after ``--``, never a shell's word, but
ssh itself gives it to the user's ``ProxyCommand`` or ``Match exec`` through a shell
(``%h``, ``%r``), so nothing a shell reads is let through.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from zcoder.base.errors import UsageError

DEFAULT_REMOTE_COMMAND: Final = "zcoder --acp"
DEFAULT_SSH: Final = "ssh"

_TARGET: Final = re.compile(
    r"^(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9_.-]*)@)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*)"
    r"(?::(?P<port>\d{1,5}))?"
    r"(?P<path>/.*)?$"
)


class TargetError(UsageError, ValueError):
    """The target is not ``[user@]host[:port][/path]``."""


@dataclass(frozen=True)
class Target:
    host: str
    user: str | None = None
    port: int | None = None
    path: str | None = None
    """The remote workspace: absolute (``host/srv/app`` → ``/srv/app``), or ``~/...``
    (``host/~/app``); None: the remote login's own directory."""

    @classmethod
    def parse(cls, text: str, *, what: str = "--connect", with_path: bool = True) -> Target:
        """``what`` names the option in the error; ``with_path`` False: no ``/path``."""
        found = _TARGET.match(text.strip())
        if found is None or (found["path"] is not None and not with_path):
            form, example = (
                ("[user@]host[:port][/path]", "me@build-box:2222/srv/app")
                if with_path
                else ("[user@]host[:port]", "me@build-box:2222")
            )
            raise TargetError(f"{what} takes {form}, not {text!r} (e.g. {example})")
        port = int(found["port"]) if found["port"] else None
        if port is not None and not 0 < port < 65536:
            raise TargetError(f"no such port: {port}")
        path = found["path"]
        if path is not None and path.startswith("/~"):
            path = path[1:]  # host/~/src/app: relative to the remote home
        if path in ("/", "~"):
            path = path if path == "/" else None
        return cls(host=found["host"].strip("[]"), user=found["user"], port=port, path=path)

    @property
    def label(self) -> str:
        """What the header shows: the host as the user named it."""
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"{user}{host}{port}"

    def __str__(self) -> str:
        """The target as ``--connect`` takes it again."""
        if self.path is None:
            return self.label
        return f"{self.label}{'' if self.path.startswith('/') else '/'}{self.path}"


def remote_shell_command(target: Target, remote_command: str) -> str:
    """What the remote login shell runs: into the workspace, then the agent (``exec``: its
    standard input and output are the connection's, and no shell waits in between)."""
    if target.path is None:
        return f"exec {remote_command}"
    path = target.path
    # ~/x: in the remote home, which only the remote shell knows.
    where = '"$HOME"/' + shlex.quote(path[2:]) if path.startswith("~/") else shlex.quote(path)
    return f"cd {where} && exec {remote_command}"


def ssh_argv(target: Target, env: Mapping[str, str], remote: str | None = None) -> list[str]:
    """The ssh client's command line for ``target`` (``ZCODER_SSH``), running ``remote``
    there (a command line for the remote shell; default ``ZCODER_REMOTE_COMMAND``)."""
    ssh = shlex.split(env.get("ZCODER_SSH") or DEFAULT_SSH)
    if not ssh:
        raise TargetError("ZCODER_SSH is empty")
    if remote is None:
        remote = (env.get("ZCODER_REMOTE_COMMAND") or DEFAULT_REMOTE_COMMAND).strip()
        if not remote:
            raise TargetError("ZCODER_REMOTE_COMMAND is empty")
    argv = [*ssh, "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15"]
    if target.user:
        argv += ["-l", target.user]
    if target.port:
        argv += ["-p", str(target.port)]
    argv += ["--", target.host, remote_shell_command(target, remote)]
    return argv
