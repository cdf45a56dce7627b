"""Files a command writes, and files whose contents run later.

Overwriting ``/etc/passwd`` or writing ``/proc/sysrq-trigger`` is refused at once. What is
written into a shell start-up file (``~/.bashrc``, ``/etc/profile.d/…``) or a cron table
runs later, unseen: the write is warned about, and when the written text is known it is
checked as if it ran now. The tables say which programs write which operands
(:data:`_FILE_WRITERS`) and which files run later (:data:`_STARTUP_NAMES`…).
"""

from __future__ import annotations

import posixpath
import re

from zcoder.tools.guard.deleters import _RSYNC_TAKES
from zcoder.tools.guard.model import _Command, _Refused
from zcoder.tools.guard.options import _has_option, _operands
from zcoder.tools.guard.paths import (
    _HARMLESS_DEVICES,
    _critical_file,
    _expand_home,
    _home_reason,
    _is_device,
    _normalize,
)

# Programs that write files: which operands they write ("all", "last", "in-place" for
# sed/perl -i) or the option that names the file written (dd of=, curl -o, wget -O).
_FILE_WRITERS: dict[str, str] = {
    "tee": "all", "sponge": "all", "truncate": "all", "cp": "last", "mv": "last",
    "install": "last", "ln": "last", "rsync": "last", "scp": "last", "sed": "in-place",
    "perl": "in-place", "dd": "of=", "curl": "-o", "wget": "-O", "shred": "all",
}  # fmt: skip
# Writers that replace a file with data that is not a prepared copy of it (cp /dev/null
# too): overwriting /etc/passwd that way is refused; cp, mv and sed -i of a prepared file
# are a system administrator's ordinary way to change one.
_BLIND_WRITERS = frozenset({"tee", "sponge", "truncate", "dd", "shred", "curl", "wget"})
_WRITER_TAKES = frozenset(
    {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g",
     "--group", "-s", "--size", "-r", "--reference", "-e", "--expression", "-f", "--file",
     "-n", "--iterations"}
)  # fmt: skip


def _written_files(name: str, args: list[str]) -> list[str]:
    """The files ``name args`` writes, as far as its words tell."""
    how = _FILE_WRITERS.get(name)
    if how is None:
        return []
    if how == "of=":
        return [a[3:] for a in args if a.startswith("of=")]
    if how in ("-o", "-O"):
        long = "--output" if how == "-o" else "--output-document"
        found = [a.split("=", 1)[1] for a in args if a.startswith(long + "=")]
        for index, arg in enumerate(args[:-1]):
            if arg in (how, long) or (re.fullmatch(r"-[A-Za-z]+", arg) and arg[-1] == how[1]):
                found.append(args[index + 1])  # -o FILE, or the last of a bundle: -so FILE
        return [f for f in found if f != "-"]
    takes = _WRITER_TAKES - {"-s"} if name != "truncate" else _WRITER_TAKES
    if name == "rsync":
        takes = _RSYNC_TAKES
    operands = _operands(args, takes)
    if how == "in-place":
        in_place = [a for a in args if a.startswith(("-i", "--in-place"))]
        if not in_place and not any(re.fullmatch(r"-[a-z]*i", a) for a in args):
            return []
        scripted = any(a in ("-e", "--expression", "-f", "--file") for a in args)
        return operands if scripted or name == "perl" else operands[1:]
    if how == "all":
        return operands
    if len(operands) < 2 and name == "ln":
        return []
    if len(operands) < 2:
        return []
    target = operands[-1]
    if target.endswith("/") or _home_reason(_normalize(_expand_home(target))):
        return [posixpath.join(target, posixpath.basename(s.rstrip("/"))) for s in operands[:-1]]
    return [target]


# Files a shell runs when it starts (at login, in every new shell): what is written to one
# runs later, unseen. Writing one is warned; a catastrophe written into one is refused.
_STARTUP_NAMES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
        ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc",
        ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc",
        ".xsession", ".config/fish/config.fish",
    }
)  # fmt: skip
_STARTUP_FILES = frozenset(
    {
        "/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshrc", "/etc/zshenv",
        "/etc/zprofile", "/etc/zlogin", "/etc/zsh/zshrc", "/etc/zsh/zshenv",
        "/etc/zsh/zprofile", "/etc/zsh/zlogin", "/etc/environment", "/etc/rc.local",
    }
)  # fmt: skip
_STARTUP_DIRS = ("/etc/profile.d/", "/etc/cron.hourly/", "/etc/cron.daily/",
                 "/etc/cron.weekly/", "/etc/cron.monthly/")  # fmt: skip
_CRONTAB_FILES = ("/etc/crontab", "/etc/cron.d/", "/var/spool/cron/")
_HOME_DIR = re.compile(r"/home/[^/*?\[]+|/root")


def _runs_later(path: str) -> str | None:
    """ "script" when ``path`` is a file a shell runs at start, "crontab" for cron's tables."""
    normal = _normalize(_expand_home(path))
    if normal in _STARTUP_FILES or normal.startswith(_STARTUP_DIRS):
        return "script"
    if normal == "/etc/crontab" or normal.startswith(_CRONTAB_FILES[1:]):
        return "crontab"
    for name in _STARTUP_NAMES:
        if normal.endswith("/" + name) and _HOME_DIR.fullmatch(normal[: -len(name) - 1]):
            return "script"
    return None


def _later_warning(how: str, target: str, kind: str) -> str:
    when = "cron runs on its schedule" if kind == "crontab" else "a shell runs when it starts"
    return f"{how} writes {target}, which {when}: check what goes into it before approving"


def _cron_commands(text: str, system: bool) -> list[str]:
    """The commands of a crontab's lines (a system crontab has a user field)."""
    commands: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or re.match(r"[A-Za-z_][A-Za-z0-9_]*\s*=", line):
            continue
        fields = line.split(None, (1 if line.startswith("@") else 5) + (1 if system else 0))
        if len(fields) < (2 if line.startswith("@") else 6):
            continue
        commands.append(re.split(r"(?<!\\)%", fields[-1], maxsplit=1)[0])
    return commands


def _check_redirect(target: str, append: bool = False) -> None:
    if _is_device(target):
        raise _Refused(f"writing to the device {target} would destroy its contents")
    _check_written_file(target, append)


def _check_written_file(target: str, append: bool) -> None:
    normal = _normalize(_expand_home(target))
    if normal == "/proc/sysrq-trigger":
        raise _Refused("writing to /proc/sysrq-trigger can crash or restart the machine at once")
    if _critical_file(normal) and not append:
        raise _Refused(f"overwriting {normal} would lock users out or stop the machine booting")


def _check_dd(command: _Command) -> None:
    """``dd of=`` a device destroys what the device holds."""
    name, args = command.name, command.args
    if name == "dd":
        for arg in args:
            if arg.startswith("of=") and _is_device(arg[3:]):
                raise _Refused(f"dd onto the device {arg[3:]} would destroy its contents")


def _check_writes(command: _Command) -> None:
    """Each file the command writes: a device, a critical file replaced blindly, a file
    that runs later."""
    name, args, warn = command.name, command.args, command.warn
    blind = name in _BLIND_WRITERS or (
        name in ("cp", "install") and any(_normalize(a) in _HARMLESS_DEVICES for a in args)
    )
    for target in _written_files(name, args):
        if blind:
            _check_written_file(target, append=_has_option(args, "-a", "--append"))
        if _is_device(target) and name != "dd":
            raise _Refused(f"{name} onto the device {target} would destroy its contents")
        later = _runs_later(target)
        if later is not None:
            warn(_later_warning(name, target, later))
