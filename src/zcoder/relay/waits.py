"""Waits that would close a cycle (A waits on B while B waits on A, directly or through
others) are refused before they start.

Each instance publishes whom it waits on now in its manifest, as one flat scalar member
``waiting_on`` (an instance id; absent when none: zcoder.zsh ignores it). Before a wait,
the waiter publishes it, then walks the chain the target starts through the registry's
manifests (each validated; at most MAX_HOPS; a dead instance ends it). Publishing first
means two instances that start waiting on each other at the same moment both see the
cycle and both refuse: nothing hangs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from zcoder.base.processes import pid_alive
from zcoder.relay.registry import Manifest, ManifestError, read_manifest_file

MAX_HOPS: Final = 128


def _label(manifest: Manifest) -> str:
    return manifest.name or manifest.project or manifest.instance_id


def cycle_through(registry: Path, me: str, target: str) -> list[str] | None:
    """The names along the cycle ``me → target → … → me`` that waiting on ``target``
    would close, or None when there is none."""
    chain: list[Manifest] = []
    seen = {me}
    current = target
    for _hop in range(MAX_HOPS):
        try:
            manifest = read_manifest_file(registry, f"a-{current}.json")
        except ManifestError:
            return None
        if not pid_alive(manifest.pid):
            return None
        chain.append(manifest)
        seen.add(current)
        current = manifest.waiting_on
        if not current:
            return None
        if current == me:
            try:
                mine = _label(read_manifest_file(registry, f"a-{me}.json"))
            except ManifestError:
                mine = me
            return [mine, *(_label(m) for m in chain), mine]
        if current in seen:
            return None  # a cycle of others, not through this instance
    return None


def cycle_refusal(names: list[str]) -> str:
    return f"refused: waiting on {names[1]} would close a cycle: " + " \u2192 ".join(names)
