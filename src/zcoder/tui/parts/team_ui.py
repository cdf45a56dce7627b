"""/spawn, /team and the model's spawn_agent in the TUI: workers in their own git worktrees
and tmux windows (zcoder.team).

A spawn is one path whoever asks (the user's /spawn, the model's spawn_agent): the plan
is checked, the user confirms it in a dialog (always: ``--yes`` and ``a`` do not answer
it), the worktree and the window are made, the worker is waited for until its relay is
ready, and the task is sent to it through the relay as any message is (its receipt comes
back to this transcript, as every receipt does). Git, tmux and the registry are asked
off the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from zcoder.agent import register_spawn_tool
from zcoder.base.sanitize import visible
from zcoder.board import Board, BoardError, Task
from zcoder.relay import BadName, Peer, Relay, name_of
from zcoder.sessions import SessionStoreError
from zcoder.sessions.relay_log import RelayLog
from zcoder.slash.declared import TeamCommands
from zcoder.team import git as team_git
from zcoder.team.git import TeamError
from zcoder.team.listing import live_peer, team_text
from zcoder.team.roster import Roster, Worker
from zcoder.team.spawn import (
    SpawnOutcome,
    SpawnPlan,
    WorkerFlags,
    by_hand,
    plan_spawn,
    split_arguments,
    start_worker,
    wait_ready,
)
from zcoder.team.window import alive, in_tmux, open_windows, stop_window
from zcoder.tools import ApprovalPolicy, CommandPolicy
from zcoder.tui.dialogs.guarded import GuardedDialog
from zcoder.tui.dialogs.team import MergeScreen, RemoveWorktreeScreen, SpawnScreen
from zcoder.tui.parts.services import Part

__all__ = ["TeamUI"]

TEAM_USAGE = "usage: /team, /team merge NAME, or /team stop NAME [remove]"


@dataclass(eq=False)
class TeamUI(Part, TeamCommands):
    """Spawns, lists, merges and stops this repository's workers. ``confirm`` asks the
    user with a dialog (False when it cannot be shown: nothing is done)."""

    _: KW_ONLY
    confirm: Callable[[GuardedDialog[Any], str], Awaitable[bool]]

    @property
    def relay(self) -> Relay | None:
        return self.services.relay if self.services.relay_available else None

    def worker_flags(self) -> WorkerFlags:
        """The lead's choices, for a worker's command line (zcoder.team.spawn)."""
        config = self.services.config
        approval = getattr(self.services.agent, "approval", None)
        mode = approval.chosen_mode if isinstance(approval, ApprovalPolicy) else config.mode
        window = config.context_window
        return WorkerFlags(
            self.services.model,
            config.backend,
            config.host,
            config.base_url,
            str(config.gguf) if config.gguf else "",
            profile=config.profile.value,
            mode=mode.value,
            context_window=window.tokens if window is not None and window.kind == "flag" else None,
            no_think=config.think is False,
            deny_commands=config.command_policy is CommandPolicy.DENY,
        )

    def roster(self, repo: Path) -> Roster:
        return Roster(self.services.config.home, repo)

    # -- /spawn and spawn_agent ---------------------------------------------------------

    def offer_tool(self) -> None:
        """The model's spawn_agent, which spawns through ``spawn`` (with its dialog)."""
        services = self.services
        if services.agent is not None:
            register_spawn_tool(services.agent.registry, self, lambda: services.relay_available)

    def spawn_command(self, argument: str) -> None:
        try:
            name, task = split_arguments(argument)
        except TeamError as exc:
            self.say.error(str(exc))
            return

        async def run() -> None:
            outcome = await self.spawn(name, task)
            if outcome.started or outcome.by_hand:
                self.say.notice(outcome.text)
            else:
                self.say.error(outcome.text)

        self.host.run_later(run, group="team")

    async def spawn(self, name: str, task: str, *, by_model: bool = False) -> SpawnOutcome:
        """The one path of a spawn (see the module's docstring)."""
        config = self.services.config
        try:
            plan = await asyncio.to_thread(plan_spawn, config.workspace, name, task, config.home)
        except (TeamError, BadName) as exc:
            return SpawnOutcome(False, f"No worker was started: {exc}")
        if not in_tmux(os.environ):
            return SpawnOutcome(False, by_hand(plan, self.worker_flags()), by_hand=True)
        relay = self.relay
        if relay is None:
            return SpawnOutcome(False, "No worker was started: the relay is off here.")
        found = await asyncio.to_thread(relay.discover)
        names = {name_of(peer).casefold() for peer in found.peers} | {relay.name.casefold()}
        if plan.name.casefold() in names:
            return SpawnOutcome(
                False,
                f"No worker was started: a live zcoder is named {plan.name} already (a name"
                " must find one agent: choose another)",
            )
        if not await self.confirm(
            SpawnScreen(plan, self.worker_flags().choices(), by_model=by_model),
            "The terminal is too small for the dialog",
        ):
            return SpawnOutcome(False, f"The user did not start the worker {plan.name}.")
        self.say.notice(f"Starting {plan.name} in a new tmux window, on {plan.branch}…")
        try:
            return await self._start(plan, relay)
        except (TeamError, OSError) as exc:
            made = await asyncio.to_thread(team_git.branch_exists, plan.repo, plan.branch)
            kept = (
                f" Its worktree and branch stay: /team stop {plan.name} remove takes them off."
                if made
                else ""
            )
            return SpawnOutcome(False, f"The worker {plan.name} did not start: {exc}.{kept}")

    async def _start(self, plan: SpawnPlan, relay: Relay) -> SpawnOutcome:
        """The worktree and window, the worker ready, its task sent (each off the loop)."""
        home, flags = self.services.config.home, self.worker_flags()
        worker = await asyncio.to_thread(start_worker, plan, flags, home, os.environ)
        peer = await wait_ready(relay.discover, worker.pid, functools.partial(alive, worker.pid))
        worker.instance_id = peer.instance_id
        result = await asyncio.to_thread(relay.send, peer.instance_id, plan.task)
        if result.message_id and result.accepted:
            worker.messages.append(result.message_id)
        await asyncio.to_thread(self.roster(plan.repo).put, worker)
        where = f"{plan.name} works in {visible(str(plan.workdir))} on {plan.branch}"
        if not result.accepted:
            return SpawnOutcome(False, f"{where}, but its task was not taken: {result.text}")
        return SpawnOutcome(
            True,
            f"{where}, in the tmux window {plan.name}. Its task was sent; its receipt comes"
            " here. /team shows the team.",
        )

    # -- /team ----------------------------------------------------------------------------

    def team_command(self, argument: str) -> None:
        action, _, rest = argument.strip().partition(" ")
        name, _, extra = rest.strip().partition(" ")
        if action == "":
            self.host.run_later(self._list, group="team")
        elif action == "merge" and name and not extra:
            self.host.run_later(functools.partial(self._merge, name), group="team")
        elif action == "stop" and name and extra.strip() in ("", "remove"):
            remove = extra.strip() == "remove"
            self.host.run_later(functools.partial(self._stop, name, remove), group="team")
        else:
            self.say.error(TEAM_USAGE)

    async def _repo(self) -> Path | None:
        try:
            return await asyncio.to_thread(team_git.repo_root, self.services.config.workspace)
        except TeamError as exc:
            self.say.error(str(exc))
            return None

    async def _worker(self, name: str) -> tuple[Path, Worker] | None:
        repo = await self._repo()
        if repo is None:
            return None
        worker = self.roster(repo).find(name)
        if worker is None:
            self.say.error(f"No worker named {visible(name)} on this team (/team lists them).")
            return None
        return repo, worker

    async def _list(self) -> None:
        repo = await self._repo()
        if repo is None:
            return
        workers = self.roster(repo).load()
        relay = self.relay
        peers = (await asyncio.to_thread(relay.discover)).peers if relay else []
        windows = await asyncio.to_thread(open_windows) if in_tmux(os.environ) else {}
        tasks = await asyncio.to_thread(self._board_tasks)
        self.say.notice(team_text(workers, peers, self._receipts(), set(windows), tasks))

    def _board_tasks(self) -> list[Task]:
        """The repository's task board as it stands (none when it cannot be read: /tasks
        says why)."""
        config = self.services.config
        try:
            board = Board.for_workspace(config.home, config.workspace)
        except (BoardError, OSError):
            return []
        try:
            return board.tasks()
        except (BoardError, OSError):
            return []
        finally:
            board.close()

    def _receipts(self) -> dict[str, tuple[str, str]]:
        store = self.services.store
        if store is None:
            return {}
        try:
            records = RelayLog(store).history(self.services.config.workspace)
        except SessionStoreError:
            return {}
        return {
            r.message_id: (r.receipt_outcome, r.receipt_summary)
            for r in records
            if r.direction == "sent" and r.receipt_outcome
        }

    async def _merge(self, name: str) -> None:
        found = await self._worker(name)
        if found is None:
            return
        repo, worker = found
        try:
            into = await asyncio.to_thread(team_git.current_branch, repo)
            preview = await asyncio.to_thread(team_git.merge_preview, repo, worker.branch)
            uncommitted = (
                await asyncio.to_thread(team_git.changed_files, Path(worker.worktree))
                if Path(worker.worktree).is_dir()
                else []
            )
        except TeamError as exc:
            self.say.error(str(exc))
            return
        if not preview.clean:
            files = ", ".join(visible(f) for f in preview.conflicts)
            self.say.error(
                f"{worker.branch} conflicts with {visible(into)} in {files}: nothing was "
                f"merged. Resolve it in {visible(worker.name)}'s worktree (merge {visible(into)}"
                " there), then /team merge again."
            )
            return
        if preview.commits == 0:
            self.say.notice(f"{worker.branch} has no commits that {visible(into)} lacks.")
            return
        self.say.notice(f"{worker.branch} merges cleanly into {visible(into)}:\n{preview.stat}")
        screen = MergeScreen(worker, preview, into, uncommitted)
        if not await self.confirm(screen, "The terminal is too small for the merge dialog"):
            self.say.notice(f"Not merged: {worker.branch} is as it was.")
            return
        try:
            summary = await asyncio.to_thread(team_git.merge, repo, preview)
        except TeamError as exc:
            self.say.error(str(exc))
            return
        self.say.notice(f"Merged {worker.branch} into {visible(into)}: {visible(summary)}")

    async def _stop(self, name: str, remove: bool) -> None:
        found = await self._worker(name)
        if found is None:
            return
        repo, worker = found
        relay = self.relay
        peers = (await asyncio.to_thread(relay.discover)).peers if relay else []
        peer: Peer | None = live_peer(worker, peers)
        if worker.window and in_tmux(os.environ):
            try:
                what = await asyncio.to_thread(stop_window, worker.window, worker.pid)
            except (TeamError, OSError) as exc:
                self.say.error(f"{visible(worker.name)} could not be stopped: {exc}")
                return
        elif peer is not None:
            self.say.error(f"{visible(worker.name)} runs outside tmux here: quit it in its window.")
            return
        else:
            what = "it was not running"
        self.say.notice(f"Stopped {visible(worker.name)}: {what}.")
        if not remove:
            self.roster(repo).put(dataclasses.replace(worker, window="", pid=0))
            self.say.notice(
                f"Its worktree {visible(worker.worktree)} and branch {worker.branch} stay: "
                f"/team merge {visible(worker.name)}, or /team stop {visible(worker.name)} "
                "remove."
            )
            return
        await self._remove(repo, worker)

    async def _remove(self, repo: Path, worker: Worker) -> None:
        path = Path(worker.worktree)
        force = False
        if path.is_dir():
            try:
                files = await asyncio.to_thread(team_git.changed_files, path)
            except TeamError as exc:
                self.say.error(str(exc))
                return
            if files:
                screen = RemoveWorktreeScreen(worker, files)
                if not await self.confirm(screen, "The terminal is too small for the dialog"):
                    self.say.notice(f"Kept {visible(worker.worktree)} and its changes.")
                    return
                force = True
            try:
                await asyncio.to_thread(team_git.remove_worktree, repo, path, force=force)
            except TeamError as exc:
                self.say.error(str(exc))
                return
        self.roster(repo).remove(worker.name)
        self.say.notice(
            f"Removed {visible(worker.worktree)}; the branch {worker.branch} stays (git branch"
            f" -D {worker.branch} deletes it)."
        )
