"""Ways to take the whole machine down: power commands, partitioning and disk tools
(:data:`_DISK_TOOLS`), and programs that kill by owner, parent or pattern
(:data:`_PROCESS_KILLERS`).

Disk tools are a table because most of them have harmless read-only uses (``fdisk -l``,
``sgdisk -p``, ``wipefs /dev/sdb``) that an administrator runs every day; each entry says
which words write, which only read and which make a dry run.
"""

from __future__ import annotations

import getpass
import os
import posixpath
import re
from dataclasses import dataclass

from zcoder.tools.guard.deleters import _check_tree
from zcoder.tools.guard.model import _Command, _Refused
from zcoder.tools.guard.options import _has_option, _operands
from zcoder.tools.guard.paths import _normalize

_POWER_COMMANDS = frozenset({"shutdown", "reboot", "halt", "poweroff"})


@dataclass(frozen=True)
class _DiskTool:
    """When a partitioning or disk tool destroys data. A word of ``dry`` makes it change
    nothing; any of ``writes`` changes the disk; else any of ``reads`` only lists; else
    ``otherwise`` decides (an editor given a device reads its commands from stdin)."""

    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    dry: frozenset[str] = frozenset()
    otherwise: bool = True


_HELP = frozenset({"-h", "--help", "-V", "--version"})
_FORMATTER = _DiskTool(reads=frozenset({"--help"}))
# fmt: off
_DISK_TOOLS: dict[str, _DiskTool] = {
    "fdisk": _DiskTool(reads=_HELP | {"-l", "--list", "-s", "--getsz", "-x", "--list-details"}),
    "sfdisk": _DiskTool(
        writes=frozenset(
            {
                "--delete", "--append", "-a", "-N", "--wipe-partitions", "--relocate", "-r",
                "--reorder", "--part-type", "--part-uuid", "--part-label", "--part-attrs",
                "--disk-id", "-A", "--activate",
            }
        ),
        reads=_HELP | {
            "-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V",
            "--verify", "-F", "--list-free", "-g", "--show-geometry", "-T", "--list-types",
        },
        dry=frozenset({"-n", "--no-act"}),
    ),
    "gdisk": _DiskTool(reads=_HELP | {"-l"}),
    "cgdisk": _DiskTool(reads=_HELP),
    "cfdisk": _DiskTool(reads=_HELP),
    "fixparts": _DiskTool(reads=_HELP),
    "sgdisk": _DiskTool(
        writes=frozenset(
            {
                "-Z", "--zap-all", "-z", "--zap", "-o", "--clear", "-d", "--delete", "-n",
                "--new", "-N", "--largest-new", "-g", "--mbrtogpt", "-m", "--gpttombr", "-l",
                "--load-backup", "-t", "--typecode", "-c", "--change-name", "-G",
                "--randomize-guids", "-U", "--disk-guid", "-u", "--partition-guid", "-r",
                "--transpose", "-s", "--sort", "-A", "--attributes", "-R", "--replicate",
                "-e", "--move-second-header", "-h", "--hybrid",
            }
        ),
        reads=frozenset(
            {
                "-p", "--print", "-i", "--info", "-v", "--verify", "-O", "--print-mbr", "-L",
                "--list-types", "-b", "--backup", "-D", "--display-alignment", "-V",
                "--version", "--help",
            }
        ),
        dry=frozenset({"-P", "--pretend"}),
    ),
    "parted": _DiskTool(
        writes=frozenset(
            {
                "mklabel", "mktable", "mkpart", "mkpartfs", "rm", "resizepart", "resize",
                "rescue", "name", "set", "toggle", "disk_set", "disk_toggle", "mkfs", "move",
                "cp", "type",
            }
        ),
        reads=_HELP | {"-l", "--list", "print", "p", "align-check", "help", "version"},
    ),
    "wipefs": _DiskTool(
        writes=frozenset({"-a", "--all", "-o", "--offset"}),
        dry=frozenset({"-n", "--no-act"}),
        otherwise=False,
    ),
    "blkdiscard": _DiskTool(reads=_HELP),
    "cryptsetup": _DiskTool(
        writes=frozenset({"luksFormat", "erase", "luksErase", "luksKillSlot"}), otherwise=False
    ),
    "mdadm": _DiskTool(writes=frozenset({"--zero-superblock", "--create", "-C"}), otherwise=False),
    "pvcreate": _DiskTool(reads=_HELP),
    "pvremove": _DiskTool(reads=_HELP),
    "vgremove": _DiskTool(reads=_HELP),
    "lvremove": _DiskTool(reads=_HELP),
    "zpool": _DiskTool(writes=frozenset({"destroy", "labelclear", "create"}), otherwise=False),
    "vgcreate": _DiskTool(reads=_HELP),
    "hdparm": _DiskTool(
        writes=frozenset(
            {
                "--security-erase", "--security-erase-enhanced", "--write-sector",
                "--trim-sector-ranges", "--make-bad-sector", "--dco-restore",
            }
        ),
        otherwise=False,
    ),
    "nvme": _DiskTool(writes=frozenset({"format", "sanitize"}), otherwise=False),
    "sg_format": _DiskTool(reads=_HELP),
    "sg_sanitize": _DiskTool(reads=_HELP),
    "badblocks": _DiskTool(writes=frozenset({"-w"}), otherwise=False),
    "flashrom": _DiskTool(writes=frozenset({"-w", "--write", "-E", "--erase"}), otherwise=False),
    # Filesystem and device-mapper tools: repairing, resizing or tearing down in place.
    "debugfs": _DiskTool(writes=frozenset({"-w", "--write"}), otherwise=False),
    "dmsetup": _DiskTool(
        writes=frozenset(
            {"remove_all", "remove", "wipe_table", "reload", "load", "clear", "create", "suspend"}
        ),
        otherwise=False,
    ),
    "e2fsck": _DiskTool(
        writes=frozenset({"-y", "-p", "-a", "-D", "-E"}), dry=frozenset({"-n"}), otherwise=False
    ),
    "fsck": _DiskTool(
        writes=frozenset({"-y", "-p", "-a", "-r"}), dry=frozenset({"-n", "-N"}), otherwise=False
    ),
    "xfs_repair": _DiskTool(reads=_HELP, dry=frozenset({"-n"})),
    "resize2fs": _DiskTool(reads=_HELP | {"-P"}),
    "lvreduce": _DiskTool(reads=_HELP),
    "tune2fs": _DiskTool(
        writes=frozenset({"-O", "-I", "-U", "-j", "-J", "-f"}), otherwise=False
    ),
}
# fmt: on
for _name in ("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkudffs"):
    _DISK_TOOLS[_name] = _FORMATTER


def _disk_words(args: list[str], words: frozenset[str]) -> list[str]:
    """The words of ``args`` in ``words``: as written, before ``=``, or in a bundle."""
    found: list[str] = []
    for arg in args:
        key = arg.split("=", 1)[0]
        if arg in words or key in words:
            found.append(key)
        elif re.fullmatch(r"-[A-Za-z]{2,}", arg):
            found.extend(f"-{letter}" for letter in arg[1:] if f"-{letter}" in words)
    return found


def _may_be_device(word: str, workspace: str | None) -> bool:
    """Whether ``word`` names a device, or may (a variable, a substitution, a link to one)."""
    if "$" in word or "`" in word or _normalize(word).startswith("/dev/"):
        return True
    path = word if word.startswith("/") or workspace is None else posixpath.join(workspace, word)
    try:
        return os.path.realpath(path).startswith("/dev/")
    except (OSError, ValueError):
        return True


def _check_disk_tool(command: _Command) -> None:
    """A disk tool of :data:`_DISK_TOOLS` that writes, or a formatter given a device."""
    name, args, workspace = command.name, command.args, command.workspace
    tool = _DISK_TOOLS.get(name) or (_FORMATTER if name.startswith("mkfs.") else None)
    if name.startswith("fsck.") and tool is None:
        tool = _DISK_TOOLS["e2fsck"]
    if tool is None or _disk_words(args, tool.dry):
        return
    writes = _disk_words(args, tool.writes)
    if writes:
        raise _Refused(
            f"{name} {writes[0]} changes a disk's partitions, filesystems or data; run it "
            "yourself if you mean it"
        )
    if _disk_words(args, tool.reads) or not tool.otherwise:
        return
    if tool is _FORMATTER:
        # A swap file or a disk image is a file; a device, or what may be one, is refused.
        words = [a for a in args if not a.startswith("-")]
        if not words or any(_may_be_device(w, workspace) for w in words):
            raise _Refused(f"{name} formats a device and destroys its data")
        return
    if _operands(args):
        raise _Refused(
            f"{name} changes a disk's partitions, filesystems or data; run it yourself if you "
            "mean it"
        )


def _check_volumes(command: _Command) -> None:
    """zfs destroy of a dataset, btrfs subvolume delete of a catastrophic tree, btrfs
    repairs: each deletes or rewrites a filesystem's files as a whole."""
    name, args = command.name, command.args
    operands = _operands(args)
    if name == "zfs" and operands[:1] == ["destroy"] and not _has_option(args, "-n"):
        for dataset in operands[1:]:
            if "@" not in dataset and "#" not in dataset:  # not a snapshot nor a bookmark
                raise _Refused(f"zfs destroy {dataset} deletes the dataset and all its files")
    if name != "btrfs" or not operands:
        return
    if "--repair" in args or operands[0] == "rescue":
        raise _Refused("btrfs repairs rewrite the filesystem in place; run it yourself")
    group = operands[0]
    deletes = len(operands) >= 2 and operands[1] in ("delete", "del", "de", "d")
    if deletes and len(group) >= 3 and "subvolume".startswith(group):
        for path in operands[2:]:
            _check_tree("btrfs subvolume delete", path, command.workspace, command.warn)


# Killing everything ----------------------------------------------------------------------

# Programs that signal the processes they select by name, owner or parent: their options
# whose value is the next word, and the options that select by owner and by parent.
_PROCESS_KILLERS: dict[str, frozenset[str]] = {
    "pkill": frozenset(
        {
            "-u", "--euid", "-U", "--uid", "-G", "--group", "-g", "--pgroup", "-P", "--parent",
            "-s", "--session", "-t", "--terminal", "-F", "--pidfile", "--signal", "--ns",
            "--nslist",
        }
    ),
    "killall": frozenset(
        {"-u", "--user", "-s", "--signal", "-o", "--older-than", "-y", "--younger-than"}
    ),
    "skill": frozenset({"-u", "--user", "-t", "--tty", "-p", "--pid", "-c", "--command"}),
}  # fmt: skip
_OWNER_OPTIONS = frozenset({"-u", "--euid", "-U", "--uid", "--user"})
_PARENT_OPTIONS = frozenset({"-P", "--parent"})
_ROOT_NAMES = frozenset({"root", "0"})
_SELF_NAMES = frozenset(
    {
        "$USER", "${USER}", "$LOGNAME", "${LOGNAME}", "$UID", "${UID}", "$EUID", "${EUID}",
        "$(whoami)", "`whoami`", "$(id -u)", "`id -u`", "$(id -un)", "`id -un`",
    }
)  # fmt: skip
"""Ways to name the user the command runs as."""


def _current_user() -> set[str]:
    """The name and id of the user zcoder runs as."""
    try:
        return {getpass.getuser(), str(os.getuid())}
    except (KeyError, OSError):
        return {str(os.getuid())}


_PROCESS_NAMES = ("systemd", "sshd", "bash", "init", "kworker/0:1", "zcoder")
"""A pattern that matches all of these matches every process."""


def _check_kill(command: _Command) -> None:
    """kill -1, killall5, and the killers of :data:`_PROCESS_KILLERS` aimed at everything."""
    name, args = command.name, command.args
    if name == "killall5":
        raise _Refused("killall5 signals every process on the machine")
    if name == "kill":
        operands = [a for a in args if not a.startswith("-") or a == "-1"]
        if "-1" in operands[1:] or (operands and operands[-1] == "-1"):
            raise _Refused("kill -1 would kill every process you can signal")
        if "1" in operands:
            raise _Refused("kill of PID 1 (init) stops the machine, or the container it runs")
        return
    takes = _PROCESS_KILLERS.get(name)
    if takes is None:
        return
    owners: list[str] = []
    parents: list[str] = []
    patterns: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        option, _, value = arg.partition("=")
        if arg.startswith("-") and len(arg) > 1:
            if option in takes and not value:
                value = args[index] if index < len(args) else ""
                index += 1
            elif option[:2] in takes and len(option) > 2 and not option.startswith("--"):
                option, value = option[:2], option[2:]  # -uroot
            if option in _OWNER_OPTIONS:
                owners.extend(value.split(","))
            elif option in _PARENT_OPTIONS:
                parents.extend(value.split(","))
            continue
        patterns.append(arg)
    if name == "skill":
        owners.extend(p for p in patterns if p in _ROOT_NAMES)
        patterns = [p for p in patterns if p not in _ROOT_NAMES]
    regex = name != "killall" or _has_option(args, "-r", "--regexp")
    for pattern in patterns:
        if regex and _matches_everything(pattern):
            raise _Refused(f"{name} {pattern!r} matches every process and would kill them all")
    if patterns:
        return
    if _ROOT_NAMES & set(owners):
        raise _Refused(f"{name} of every process of root would take the machine down")
    if _SELF_NAMES & set(owners) or _current_user() & set(owners):
        raise _Refused(
            f"{name} of every process of yours would end your session, your shells and zcoder"
        )
    if owners:
        command.warn(f"{name} signals every process of {', '.join(owners)}")
    if "1" in parents:
        raise _Refused(f"{name} of every child of init would kill every service")


def _matches_everything(pattern: str) -> bool:
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    return all(compiled.search(process) for process in _PROCESS_NAMES)


def _check_power(command: _Command) -> None:
    """shutdown, reboot, ``init 0``, ``systemctl poweroff``…: the machine stops."""
    name, args = command.name, command.args
    if name in _POWER_COMMANDS:
        raise _Refused(f"{name} would stop or restart the machine")
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"], ["1"], ["s"], ["S"]):
        raise _Refused(f"{name} {args[0]} would stop, restart or empty the machine")
    if name in ("systemctl", "loginctl") and any(
        arg.removesuffix(".target")
        in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "soft-reboot")
        for arg in args
    ):
        raise _Refused(f"{name} would stop or restart the machine")


# Accounts --------------------------------------------------------------------------------


def _check_accounts(command: _Command) -> None:
    """Deleting root's account, or its password: nobody can administer the machine, or
    anyone can log in as root. Deleting another user's home with its account is warned."""
    name, args, warn = command.name, command.args, command.warn
    if name in ("userdel", "deluser"):
        users = _operands(args, frozenset({"-R", "--root", "-P", "--prefix", "--conf"}))
        if _ROOT_NAMES & set(users):
            raise _Refused(f"{name} root deletes the account that administers the machine")
        removes = _has_option(args, "-r", "--remove", "--remove-home", "--remove-all-files")
        if removes and users:
            warn(f"{name} deletes the home directory of {', '.join(users)} with the account")
    if name == "passwd" and _has_option(args, "-d", "--delete"):
        users = _operands(args, frozenset({"-r", "--repository", "-R", "--root", "-P"}))
        if not users or _ROOT_NAMES & set(users):
            who = "root" if users else "your account"
            raise _Refused(f"passwd -d lets anyone log in as {who} without a password")
        warn(f"passwd -d lets anyone log in as {', '.join(users)} without a password")
