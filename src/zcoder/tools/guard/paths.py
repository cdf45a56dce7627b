"""Where a path leads, and what deleting everything there would destroy.

Paths are judged after expansion and normalisation: ``~``, ``~user`` and ``$HOME`` stand
for a home whose real location the guard does not know, so ``~/..`` is /home and
``~/../..`` is /. Symbolic links on disk along a path are followed, so a link made earlier
(``ln -s ~ h``) does not hide a home behind ``h/*``. Kept apart from the rules so that the
walker (``cd``, links, ``find``) and every rule ask the same question the same way.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex

_SYSTEM_TREES = frozenset(
    {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
        "/opt", "/proc", "/root", "/sbin", "/srv", "/sys", "/usr", "/var",
    }
)  # fmt: skip
_SYSTEM_SUBTREES = frozenset(
    {
        "/boot/efi", "/boot/grub", "/boot/grub2", "/etc/ssh", "/etc/pam.d", "/etc/security",
        "/etc/sudoers.d", "/etc/ssl", "/etc/systemd", "/etc/apt", "/etc/default",
        "/etc/init.d", "/lib/modules", "/lib/firmware", "/lib/systemd", "/usr/bin",
        "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/include", "/usr/share",
        "/usr/local", "/usr/lib/modules", "/usr/lib/systemd", "/var/lib", "/var/lib/dpkg",
        "/var/lib/rpm", "/var/lib/systemd", "/var/spool", "/var/mail", "/var/backups",
    }
)  # fmt: skip
"""Directories below the system trees that the machine needs as a whole (its boot loader,
kernel modules, remote login, packages' state): deleting one is as bad as deleting its
system tree. Directories next to them (``/var/lib/docker``, ``/var/lib/apt/lists``) are
not listed: clearing those is an administrator's everyday work."""
_HARMLESS_DEVICES = frozenset(
    {
        "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
        "/dev/random", "/dev/urandom", "/dev/full",
    }
)  # fmt: skip
_CRITICAL_FILES = frozenset(
    {
        "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers",
        "/etc/fstab", "/etc/crypttab", "/etc/nsswitch.conf", "/etc/pam.d/common-auth",
        "/etc/pam.d/system-auth", "/etc/login.defs",
    }
)  # fmt: skip
_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin"})
_ESSENTIAL_PROGRAMS = frozenset(
    {
        "sh", "bash", "dash", "zsh", "sudo", "su", "login", "sshd", "ssh", "init", "systemd",
        "mount", "ls", "cp", "mv", "env", "python3", "apt", "apt-get", "dpkg", "rpm", "dnf",
        "yum", "passwd", "getty", "agetty",
    }
)  # fmt: skip
"""Programs in the system's bin directories without which nobody can log in, repair the
machine or install the missing piece again: removing or moving one away is refused."""
_LOADERS = re.compile(r"/(?:usr/)?lib(?:64|32|x32)?/(?:[^/]+/)?(?:ld-linux[^/]*|libc\.so[^/]*)")


def _critical_file(normal: str) -> bool:
    """Whether the normalised path is a file the machine cannot do without: the account
    and authentication files, an essential program, the C library or its loader."""
    if normal in _CRITICAL_FILES or _LOADERS.fullmatch(normal):
        return True
    directory, name = posixpath.split(normal)
    return directory in _BIN_DIRS and name in _ESSENTIAL_PROGRAMS


_PWD_VARS = re.compile(r"^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(/\*?)?$")
_VARIABLE_REF = re.compile(
    r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]|\$\([^)]*\)|`[^`]*`"
)


_GLOB_CHARS = re.compile(r"[*?\[]")


def _relative(path: str) -> bool:
    """Whether a word is a relative path (not an option, an absolute path, a home path, a
    variable or ``name=value``)."""
    return bool(path) and not path.startswith(("-", "/", "~", "$", "+")) and "=" not in path


def _in_directory(path: str, directory: str | None) -> str:
    if directory is None or path.startswith(("/", "~", "$")):
        return path
    return posixpath.join(directory, path)


def _is_device(path: str) -> bool:
    normal = _normalize(path)
    return (
        normal.startswith("/dev/")
        and normal not in _HARMLESS_DEVICES
        and not (normal.startswith(("/dev/fd/", "/dev/pts/", "/dev/shm/")))
    )


# Paths -------------------------------------------------------------------------------------

_HOME = "/home/~"
"""Where ``~``, ``~user`` and ``$HOME`` lead: a home directory whose real path the guard does
not know. Paths through it are normalised like any other: ``~/..`` is /home, ``~/../..`` /."""
_HOME_PREFIX = re.compile(r"^(?:~[^/]*|\$HOME|\$\{HOME\})(?=/|$)")
_WORKSPACE_ITSELF = frozenset({"the whole workspace", "the whole current directory"})


def _expand_home(path: str) -> str:
    match = _HOME_PREFIX.match(path)
    return _HOME + path[match.end() :] if match else path


def _normalize(path: str) -> str:
    normal = posixpath.normpath(path) if path else path
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def _home_reason(normal: str) -> str | None:
    """ "a home directory" when ``normal`` is a home (root's too), or everything in one
    (``~/*``, ``~/.*``, ``/home/alice/.[!.]*``, ``/root/.[!.]*``)."""
    match = re.fullmatch(r"(/home/[^/*?\[]+|/root)(?:/(.*))?", normal)
    if match is None:
        return None
    rest = match.group(2) or ""
    if rest in ("", ".") or ("/" not in rest and _GLOB_CHARS.match(rest.lstrip(".") or "x")):
        return "a home directory"
    if rest == ".*":
        return "a home directory"
    return None


def _dangerous_target(operand: str, workspace: str | None) -> str | None:
    """What deleting (or changing) ``operand`` with all below it would destroy, or None."""
    if operand == "":
        return None
    expanded = _expand_home(operand)
    if "$" in expanded:
        if _PWD_VARS.match(operand):
            return "the whole current directory"
        return "a path that depends on a shell variable; write the path out literally"
    reason = _dangerous_path(expanded, workspace)
    if reason is not None:
        return reason
    real = _on_disk(expanded, workspace)
    if real is not None:
        home = os.path.realpath(os.path.expanduser("~"))
        reason = _dangerous_path(real, workspace)
        if reason is None and home != "/" and (real == home or real.startswith(home + "/*")):
            reason = "a home directory"
        if reason is not None:
            return f"{reason} (through the symbolic link on the way to {real})"
    return None


def _dangerous_path(expanded: str, workspace: str | None) -> str | None:
    normal = _normalize(expanded)
    if normal.startswith("/"):
        if normal == "/" or normal in ("/*", "/.*"):
            return "the whole filesystem"
        first = "/" + normal[1:].split("/", 1)[0]
        if _GLOB_CHARS.search(first):
            return "top-level system directories"
        home = _home_reason(normal)
        if home is not None:
            return home
        tree = normal[:-2] if normal.endswith("/*") else normal
        if tree in _SYSTEM_TREES or tree in _SYSTEM_SUBTREES:
            return f"the system tree {tree}"
        if workspace is not None and tree == workspace:
            return "the whole workspace"
        if workspace is not None and workspace.startswith(tree.rstrip("/") + "/"):
            return "a directory containing the workspace"
        return None
    # Relative operands: the workspace itself, all of it, or something above it.
    if normal in (".", "*", ".*", "./*") or expanded in ("./", "./*", "*", ".*"):
        return "the whole workspace"
    if normal == ".." or (normal.startswith("../") and set(normal.replace("/", "")) <= {".", "*"}):
        return "a directory containing the workspace"
    return None


def _on_disk(path: str, workspace: str | None) -> str | None:
    """``path`` with the symbolic links on disk along it resolved, when there is one (a
    link made earlier, ``ln -s ~ h``, then ``rm -rf h/*``); relative paths are taken from
    the workspace."""
    if path.startswith(_HOME):
        return None
    if not path.startswith("/"):
        if workspace is None:
            return None
        path = posixpath.join(workspace, path)
    parts = path.split("/")
    fixed = next((i for i, part in enumerate(parts) if _GLOB_CHARS.search(part)), len(parts))
    if fixed == len(parts) and len(parts) > 1 and parts[-1] not in ("", ".", ".."):
        fixed -= 1  # a link named last is the link itself (rm -rf h), not where it leads
    prefix = "/".join(parts[:fixed]) or "/"
    try:
        real = os.path.realpath(prefix)
    except (OSError, ValueError):
        return None
    if real == _normalize(prefix):
        return None
    return posixpath.join(real, *parts[fixed:]) if fixed < len(parts) else real


def _shell_join(words: list[str]) -> str:
    """``words`` as a command line, quoted where needed; a home path (``~``, ``~/x``) is left
    unquoted so that it still names a home."""
    return " ".join(w if re.fullmatch(r"~[\w./-]*", w) else shlex.quote(w) for w in words)
