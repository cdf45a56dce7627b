"""Containers and mounts that show a directory of the host somewhere else: ``docker run -v
/:/h`` (or podman, nerdctl) and ``mount --bind ~ a``.

What a container's command deletes under a volume it mounts from the host is deleted on
the host: the command is read with each mount's target replaced by its source, so ``docker
run -v /:/h alpine rm -rf /h`` is ``rm -rf /``. A bind mount is a link that cannot be
deleted alone: after ``mount --bind ~ a``, ``rm -rf a`` deletes the home.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from zcoder.tools.guard.options import _has_option, _operands

CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl"})
_RUN_SUBCOMMANDS = frozenset({"run", "create"})
# docker run's options that take a value (those written --name=value take it in the word).
_RUN_TAKES = frozenset(
    {
        "-v", "--volume", "--mount", "-e", "--env", "--env-file", "-w", "--workdir", "--name",
        "-p", "--publish", "--network", "--net", "-u", "--user", "--entrypoint", "-h",
        "--hostname", "-l", "--label", "--label-file", "--cpus", "-m", "--memory",
        "--restart", "--platform", "--add-host", "--device", "--cap-add", "--cap-drop",
        "--security-opt", "--ulimit", "--log-driver", "--log-opt", "--pid", "--ipc", "--uts",
        "--tmpfs", "--gpus", "--dns", "--shm-size", "--stop-signal", "--health-cmd",
        "--pull", "--cidfile", "--volumes-from", "-a", "--attach", "--expose", "--group-add",
        "--runtime", "--link", "--ip", "--mac-address", "--cgroupns", "--userns",
        "--memory-swap", "--cpu-shares", "-c", "--cpuset-cpus", "--stop-timeout",
        "--storage-opt", "--sysctl", "--annotation", "--hostuser", "--arch", "--os",
    }
)  # fmt: skip
_MOUNT_TAKES = frozenset(
    {"-o", "--options", "-t", "--types", "-L", "--label", "-U", "--uuid", "-O",
     "--test-opts", "--source", "--target", "-N", "--namespace"}
)  # fmt: skip


@dataclass(frozen=True)
class _Volume:
    """A directory of the host (``source``) shown inside a container at ``target``."""

    source: str
    target: str
    writable: bool


@dataclass
class _ContainerRun:
    """What ``docker run`` mounts, and the command it runs in the container."""

    volumes: list[_Volume] = field(default_factory=list)
    command: list[str] = field(default_factory=list)


def _host_path(path: str) -> bool:
    """Whether a volume's source is a host path (not a named volume)."""
    return path.startswith(("/", "~", "$", ".", "`"))


def _volume(spec: str) -> _Volume | None:
    """``-v SOURCE:TARGET[:OPTIONS]`` as a volume, when SOURCE is a host path."""
    parts = spec.split(":")
    if len(parts) < 2 or not _host_path(parts[0]):
        return None
    options = parts[2].split(",") if len(parts) > 2 else []
    return _Volume(parts[0], parts[1], "ro" not in options and "readonly" not in options)


def _mount(spec: str) -> _Volume | None:
    """``--mount type=bind,source=…,target=…[,readonly]`` as a volume."""
    fields: dict[str, str] = {}
    flags: set[str] = set()
    for item in spec.split(","):
        key, equals, value = item.partition("=")
        if equals:
            fields[key.strip().lower()] = value.strip()
        else:
            flags.add(key.strip().lower())
    source = fields.get("source") or fields.get("src") or ""
    target = fields.get("target") or fields.get("destination") or fields.get("dst") or ""
    if fields.get("type", "volume") != "bind" or not source or not target:
        return None
    readonly = "readonly" in flags or "ro" in flags or fields.get("readonly") in ("true", "1")
    return _Volume(source, target, not readonly)


def _container_run(args: list[str]) -> _ContainerRun | None:
    """``docker run`` (or ``create``, ``container run``) read: its host volumes and the
    command the container runs; None for any other subcommand."""
    words = args[1:] if args[:1] == ["container"] else args
    if not words or words[0] not in _RUN_SUBCOMMANDS:
        return None
    run = _ContainerRun()
    entrypoint: list[str] = []
    index = 1
    while index < len(words) and words[index].startswith("-"):
        option, equals, value = words[index].partition("=")
        if option.startswith("-v") and len(option) > 2 and not option.startswith("--"):
            option, value, equals = "-v", option[2:], "="  # -v/:/h
        if not equals and option in _RUN_TAKES:
            value = words[index + 1] if index + 1 < len(words) else ""
            index += 1
        index += 1
        volume = (
            _volume(value)
            if option in ("-v", "--volume")
            else _mount(value)
            if option == "--mount"
            else None
        )
        if volume is not None:
            run.volumes.append(volume)
        if option == "--entrypoint" and value:
            entrypoint = [value]
    run.command = [*entrypoint, *words[index + 1 :]]
    return run


def _in_host(text: str, volumes: list[_Volume]) -> str:
    """``text`` (a word or a command line in the container) with each writable volume's
    target replaced by its source on the host."""
    for volume in volumes:
        target = volume.target.rstrip("/")
        if not volume.writable or not target:
            continue
        start = r"(?<![^\s'\"=:;&|(])" + re.escape(target)
        below = volume.source.rstrip("/") + "/"
        text = re.sub(start + "/", below.replace("\\", "\\\\"), text)  # /h/etc: /etc
        text = re.sub(start + r"(?=[\s'\";&|)]|$)", volume.source.replace("\\", "\\\\"), text)
    return text


def _bind_mount(name: str, args: list[str]) -> tuple[str, str] | None:
    """The (source, mount point) of ``mount --bind SOURCE POINT`` or ``bindfs``."""
    if name == "mount":
        options = ",".join(
            b for a, b in itertools.pairwise([*args, ""]) if a in ("-o", "--options")
        )
        bind = _has_option(args, "-B", "--bind", "--rbind", "-R") or bool(
            re.search(r"(?:^|,)r?bind(?:,|$)", options)
        )
        if not bind:
            return None
    elif name != "bindfs":
        return None
    operands = _operands(args, _MOUNT_TAKES)
    return (operands[0], operands[1]) if len(operands) == 2 else None
