"""Files a command writes, and files whose contents run later.

Overwriting ``/etc/passwd`` or writing ``/proc/sysrq-trigger`` is refused at once. What is
written into a shell start-up file (``~/.bashrc``, ``/etc/profile.d/…``) or a cron table
runs later, unseen: the write is warned about, and when the written text is known it is
checked as if it ran now. The tables say which programs write which operands
(:data:`_FILE_WRITERS`) and which files run later (:data:`_STARTUP_NAMES`…).
"""

from __future__ import annotations

import itertools
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
    "perl": "in-place", "dd": "of=", "dcfldd": "of=", "curl": "-o", "wget": "-O",
    "shred": "all", "sort": "-o", "ddrescue": "second", "pv": "-o",
}  # fmt: skip
_DDRESCUE_TAKES = frozenset(
    {"-b", "-c", "-s", "-i", "-o", "-m", "-e", "-K", "-l", "-w", "-Z", "-x", "-a", "-B"}
)
# Writers that replace a file with data that is not a prepared copy of it (cp /dev/null
# too): overwriting /etc/passwd that way is refused; cp, mv and sed -i of a prepared file
# are a system administrator's ordinary way to change one.
_BLIND_WRITERS = frozenset({"tee", "sponge", "truncate", "dd", "shred", "curl", "wget", "ln"})
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
    if how == "second":  # ddrescue INFILE OUTFILE [MAPFILE]
        return _operands(args, _DDRESCUE_TAKES)[1:2]
    if how in ("-o", "-O"):
        long = "--output" if how == "-o" or name != "wget" else "--output-document"
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
_IN_HOME = re.compile(r"(?:/home/[^/*?\[]+|/root)/(.+)")
# Other files in a home that act later (persistence): "access" lets someone log in,
# "program" runs in place of a program of the same name (these directories come first
# on PATH), "autostart" runs at the next login. Files: their path in the home; folders:
# every file directly in them.
_HOME_FILES_LATER = {
    ".ssh/authorized_keys": "access", ".ssh/authorized_keys2": "access", ".ssh/rc": "script",
    ".ssh/environment": "script",
}  # fmt: skip
_HOME_FOLDERS_LATER = {
    ".local/bin": "program", "bin": "program", ".config/autostart": "autostart",
    ".config/systemd/user": "autostart", ".config/environment.d": "script",
}  # fmt: skip
_LATER_WHEN = {
    "crontab": "which cron runs on its schedule",
    "script": "which a shell runs when it starts",
    "access": "which lets whoever holds a key written there log in as you",
    "program": "which runs in place of the system's program of that name",
    "autostart": "which runs when you next log in",
}


def _runs_later(path: str) -> str | None:
    """What ``path`` does later, when a file written there acts after the command has run
    (a kind of :data:`_LATER_WHEN`): run by a shell at start, by cron, at login, in place
    of a program, or letting someone in."""
    normal = _normalize(_expand_home(path))
    if normal in _STARTUP_FILES or normal.startswith(_STARTUP_DIRS):
        return "script"
    if normal == "/etc/crontab" or normal.startswith(_CRONTAB_FILES[1:]):
        return "crontab"
    home = _IN_HOME.fullmatch(normal)
    if home is None:
        return None
    inside = home.group(1)
    if inside in _STARTUP_NAMES:
        return "script"
    folder, _, name = inside.rpartition("/")
    return _HOME_FILES_LATER.get(inside) or (_HOME_FOLDERS_LATER.get(folder) if name else None)


def _later_warning(how: str, target: str, kind: str) -> str:
    return f"{how} writes {target}, {_LATER_WHEN[kind]}: check what goes into it before approving"


def _desktop_commands(text: str) -> list[str]:
    """The commands of a desktop entry or a systemd unit (``Exec=``, ``ExecStart=``…)."""
    return [
        match.group(1) for match in re.finditer(r"(?m)^\s*Exec[A-Za-z]*\s*=\s*[-@:+!]*(.+)$", text)
    ]


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
    if name in ("dd", "dcfldd"):
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
        if _is_device(target) and name not in ("dd", "dcfldd"):
            raise _Refused(f"{name} onto the device {target} would destroy its contents")
        later = _runs_later(target)
        if later is not None:
            warn(_later_warning(name, target, later))
    if name == "sed" and _sed_empties(args):
        for target in _written_files(name, args):
            if _critical_file(_normalize(_expand_home(target))):
                raise _Refused(f"sed -i deleting every line of {target} would lock users out")


_SED_EMPTIES = re.compile(
    r"\s*(?:1\s*,\s*\$\s*|\$\s*!\s*)?(?:[dD]\s*;?|c.*)\s*|\s*s(.)\^?\.\*\$?\1\1g?\s*"
)
"""A sed script that empties a file: ``d``, ``1,$d``, ``$!d``, ``c text``, ``s/.*//``."""


def _sed_empties(args: list[str]) -> bool:
    """Whether a sed command line's script deletes or blanks every line."""
    scripts = [b for a, b in itertools.pairwise(args) if a in ("-e", "--expression")]
    if not scripts:
        scripts = _operands(args, frozenset({"-f", "--file", "-l", "--line-length"}))[:1]
    return any(_SED_EMPTIES.fullmatch(script) for script in scripts)


def _check_socat(command: _Command) -> None:
    """socat copies both ways between its two addresses: naming a device, it writes it
    (unless ``-u``/``-U`` makes the device only the side read from)."""
    if command.name != "socat":
        return
    addresses = [a for a in command.args if not a.startswith("-") or a == "-"]
    for index, address in enumerate(addresses[:2]):
        kind, colon, rest = address.partition(":")
        path = rest if colon and kind.upper() in ("OPEN", "GOPEN", "FILE", "CREATE") else address
        path = path.split(",", 1)[0]
        if not _is_device(path) or "rdonly" in address:
            continue
        read_only = ("-u" in command.args and index == 0) or ("-U" in command.args and index == 1)
        if not read_only:
            raise _Refused(f"socat writes to the device {path} and would destroy its contents")
