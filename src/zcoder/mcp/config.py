"""MCP server configuration, in the shape users already have (Claude Code's ``.mcp.json``).

Two files, read at the start of a session and by ``zcoder mcp``:

* ``.mcp.json`` at the project root (the workspace): shared with the repository, so its
  servers run code the repository chose; each needs the user's consent (zcoder.mcp.consent);
* ``$ZCODER_HOME/mcp.json``: the user's own servers, trusted as the user's own settings.

Both hold ``{"mcpServers": {NAME: ENTRY}}`` where ENTRY is ``{"type": "stdio", "command",
"args", "env"}`` or ``{"type": "http", "url", "headers"}`` (a missing type means stdio when
there is a command, http when there is a url). ``${VAR}`` and ``${VAR:-default}`` in
commands, arguments, values, URLs and headers are expanded from the environment when the
server starts, so a secret can stay out of a committed file; the consent dialog names the
variables an entry would be given (``variables_note``), never their values. A project
server of the same name as a user server wins (the nearer file), as Claude Code's
documented precedence has it (local, then project, then user); the user is told each time
(``McpConfig.shadowed``, ``shadow_notes``), never silently.

A bad file or entry never raises out of loading: it becomes a problem that names the file
and the server, and the good entries still load. Server names are checked because they
become part of tool names (``mcp__NAME__TOOL``), which models and JSON schemas restrict.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from zcoder.base.consent import digest_of, write_private_json
from zcoder.base.errors import ZcoderError
from zcoder.base.plural import plural

__all__ = [
    "PROJECT_FILE",
    "USER_FILE",
    "McpConfig",
    "McpConfigError",
    "ServerEntry",
    "check_server_name",
    "config_stamp",
    "entry_hash",
    "expand",
    "load_mcp_config",
    "parse_entry",
    "project_file",
    "remove_server",
    "save_server",
    "shadow_notes",
    "user_file",
    "variables_note",
    "write_json_atomically",
]

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
MAX_CONFIG_BYTES = 1024 * 1024
Scope = Literal["project", "user"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_KEYS = {
    "stdio": {"type", "command", "args", "env", "cwd"},
    "http": {"type", "url", "headers"},
}


class McpConfigError(ZcoderError, ValueError):
    """A configuration that cannot be used; the message names the file and the server."""


def check_server_name(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None when it can.

    Letters, digits, ``-`` and ``_``, 1 to 40 of them, not starting with ``-``/``_``, and
    no ``__``: the tool name ``mcp__NAME__TOOL`` must split back into its parts.
    """
    if not _NAME.fullmatch(name):
        return (
            "a server name is 1 to 40 letters, digits, '-' or '_', starting with a letter or digit"
        )
    if "__" in name:
        return "a server name may not contain '__' (it separates the parts of tool names)"
    return None


@dataclass(frozen=True)
class ServerEntry:
    """One configured server, as written in its file (before ``${VAR}`` expansion)."""

    name: str
    scope: Scope
    source: Path
    """The file it came from (named in every problem and in the consent dialog)."""
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """The entry exactly as read: what consent is given to (entry_hash)."""

    def describe(self) -> str:
        """The entry on one line, as a user reads it in a list or a dialog."""
        if self.transport == "http":
            return f"http {self.url}"
        return " ".join([self.command, *self.args])

    def variables(self) -> dict[str, str | None]:
        """The ``${VAR}`` the entry names, in order, each with its default (None: none)."""
        texts = [self.command, *self.args, self.cwd, self.url]
        texts += [value for _key, value in (*self.env, *self.headers)]
        found: dict[str, str | None] = {}
        for text in texts:
            for match in _VARIABLE.finditer(text):
                found.setdefault(match.group(1), match.group(2))
        return found


def entry_hash(raw: Mapping[str, Any]) -> str:
    """A digest of an entry's canonical JSON: consent is given to exactly this content."""
    return digest_of(raw)


def expand(text: str, environ: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` replaced from ``environ``.

    An unset variable without a default is an error (a server started with an empty
    token fails later, and less clearly); ``${VAR:-}`` allows empty on purpose.
    """

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise McpConfigError(f"the variable ${{{name}}} is not set")
            return default
        return value

    return _VARIABLE.sub(replace, text)


def variables_note(entry: ServerEntry, environ: Mapping[str, str]) -> str:
    """What of the user's environment the entry would be given, by name and never by value
    ("" when it names no variable): for the consent question, since the entry as written
    shows only ``${SECRET_TOKEN}``."""
    named = entry.variables()
    if not named:
        return ""
    parts = []
    for name, default in named.items():
        if environ.get(name):
            parts.append(f"{name} (set)")
        elif default is not None:
            parts.append(f"{name} (not set: its default is used)")
        else:
            parts.append(f"{name} (not set: the server would not start)")
    return "it is given these variables of your environment, filled in: " + ", ".join(parts)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise McpConfigError(f"{what} must be a list of strings")
    return tuple(value)


def _table(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise McpConfigError(f"{what} must be an object of strings")
    return tuple(value.items())


def parse_entry(name: str, raw: Any, *, scope: Scope, source: Path) -> ServerEntry:
    """One server's entry, checked; raises McpConfigError saying what is wrong."""
    problem = check_server_name(name)
    if problem is not None:
        raise McpConfigError(f"{name!r}: {problem}")
    if not isinstance(raw, dict):
        raise McpConfigError("the entry must be an object")
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    if kind in ("streamable-http", "streamableHttp"):
        kind = "http"
    if kind not in _KEYS:
        raise McpConfigError(f"type must be 'stdio' or 'http', not {kind!r}")
    unknown = sorted(set(raw) - _KEYS[kind])
    if unknown:
        raise McpConfigError(
            f"unknown {plural(len(unknown), 'key')} for a {kind} server: {', '.join(unknown)}"
        )
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise McpConfigError("a stdio server needs a command (a non-empty string)")
        cwd = raw.get("cwd", "")
        if not isinstance(cwd, str):
            raise McpConfigError("cwd must be a string")
        return ServerEntry(
            name,
            scope,
            source,
            "stdio",
            command=command,
            args=_strings(raw.get("args", []), "args"),
            env=_table(raw.get("env", {}), "env"),
            cwd=cwd,
            raw=dict(raw),
        )
    url = raw.get("url")
    if not isinstance(url, str) or not re.match(r"(https?://|\$\{)", url):
        raise McpConfigError("an http server needs a url starting with http:// or https://")
    return ServerEntry(
        name,
        scope,
        source,
        "http",
        url=url,
        headers=_table(raw.get("headers", {}), "headers"),
        raw=dict(raw),
    )


@dataclass
class McpConfig:
    """Every configured server by name (project entries over user ones), and the problems."""

    servers: dict[str, ServerEntry] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """One line each: the file, the server when there is one, and what is wrong."""
    shadowed: dict[str, ServerEntry] = field(default_factory=dict)
    """The user's servers a project server of the same name replaces, by name."""


def shadow_notes(config: McpConfig) -> list[str]:
    """One line per user server a project server replaces (said at start, by /mcp and by
    ``zcoder mcp list``)."""
    return [
        f"the project's {config.servers[name].source} names a server {name!r}, as your "
        f"{user.source} does: the project's is used (the nearer file wins, as in Claude "
        f"Code), and it starts only with your consent; yours runs {user.describe()!r}"
        for name, user in config.shadowed.items()
        if name in config.servers
    ]


def project_file(workspace: Path) -> Path:
    return workspace / PROJECT_FILE


def user_file(home: Path) -> Path:
    return home / USER_FILE


def _read(path: Path) -> dict[str, Any] | None:
    """The file's JSON object, None when there is no file; McpConfigError when unusable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise McpConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise McpConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise McpConfigError(f"{path}: the file must hold a JSON object")
    servers = parsed.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{path}: mcpServers must be an object of servers by name")
    return parsed


def _load_file(path: Path, scope: Scope, config: McpConfig) -> None:
    try:
        parsed = _read(path)
    except McpConfigError as exc:
        config.problems.append(str(exc))
        return
    if parsed is None:
        return
    for name, raw in parsed.get("mcpServers", {}).items():
        try:
            entry = parse_entry(str(name), raw, scope=scope, source=path)
            replaced = config.servers.get(entry.name)
            if replaced is not None and replaced.scope != scope:
                config.shadowed[entry.name] = replaced
            config.servers[entry.name] = entry
        except McpConfigError as exc:
            config.problems.append(f"{path}: server {name!r}: {exc}")


def load_mcp_config(workspace: Path, home: Path | None) -> McpConfig:
    """The servers of both files; never raises for what the files hold."""
    config = McpConfig()
    if home is not None:
        _load_file(user_file(home), "user", config)
    _load_file(project_file(workspace), "project", config)
    return config


Stamp = tuple[tuple[int, int, int, int] | None, ...]


def config_stamp(workspace: Path, home: Path | None) -> Stamp:
    """What both files are now (inode, size, change and modification times; None for a file
    that is not there): a running zcoder compares it to notice ``zcoder mcp add`` or an
    edit made elsewhere."""
    stamps: list[tuple[int, int, int, int] | None] = []
    for path in (user_file(home) if home is not None else None, project_file(workspace)):
        try:
            info = os.stat(path) if path is not None else None
        except OSError:
            info = None
        stamps.append(
            None
            if info is None
            else (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        )
    return tuple(stamps)


def _scope_file(scope: Scope, workspace: Path, home: Path) -> Path:
    return project_file(workspace) if scope == "project" else user_file(home)


def write_json_atomically(path: Path, data: dict[str, Any], mode: int) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it)."""
    try:
        write_private_json(path, data, mode)
    except OSError as exc:
        raise McpConfigError(f"could not save {path}: {exc.strerror or exc}") from exc


def save_server(
    name: str, raw: dict[str, Any], *, scope: Scope, workspace: Path, home: Path
) -> ServerEntry:
    """Add or replace one server in the scope's file, keeping everything else in it."""
    path = _scope_file(scope, workspace, home)
    entry = parse_entry(name, raw, scope=scope, source=path)
    data = _read(path) or {}
    servers = dict(data.get("mcpServers", {}))
    servers[name] = raw
    data["mcpServers"] = servers
    # The user's file may hold secrets (headers, env): only the user reads it. The
    # project's file is meant to be shared.
    write_json_atomically(path, data, 0o600 if scope == "user" else 0o644)
    return entry


def remove_server(name: str, *, scope: Scope, workspace: Path, home: Path) -> bool:
    """Remove one server from the scope's file; False when it was not there."""
    path = _scope_file(scope, workspace, home)
    data = _read(path)
    if data is None or name not in data.get("mcpServers", {}):
        return False
    servers = dict(data["mcpServers"])
    del servers[name]
    data["mcpServers"] = servers
    write_json_atomically(path, data, 0o600 if scope == "user" else 0o644)
    return True


def split_tool_name(qualified: str) -> tuple[str, str] | None:
    """``mcp__SERVER__TOOL`` as (SERVER, TOOL); None for any other name."""
    if not qualified.startswith("mcp__"):
        return None
    server, separator, tool = qualified[5:].partition("__")
    return (server, tool) if separator and server and tool else None
