"""Command-line parsing, mode selection and exit codes; nothing else."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zcoder.base.errors import EXIT_OK, EXIT_USAGE, ZcoderError

if TYPE_CHECKING:
    from pathlib import Path

    from zcoder.config import Config
    from zcoder.model.shared_embedded import SharedServer

# The relay's commands are parsed by zcoder.relay.scripts (see main), so argparse does
# not know them: help lists them here, in its own words, with the options they take.
USAGE = """%(prog)s [options]
       %(prog)s --acp [options]
       %(prog)s --connect [USER@]HOST[:PORT][/PATH] [--resume ID]
       %(prog)s agents [--json | --watch]
       %(prog)s send [--json] [--steer] [--wait [--timeout S]] TARGET [MESSAGE]
       %(prog)s mcp add|list|get|remove|test ...
       %(prog)s mcp serve
       %(prog)s hooks list|trust|refuse|reset
       %(prog)s tasks list|add|done|watch|claim ..."""
DESCRIPTION = """\
A terminal coding agent for local Ollama models. Several zcoder instances on
one machine can find each other and hand each other work over a private relay.

Without a command or --prompt, zcoder starts its interactive terminal UI."""
COMMANDS = """\
commands:
  agents [--json]       list the live zcoder instances on this machine (name,
                        project, pid, state, activity, id, workspace); --json:
                        one array; --watch: a live view, those waiting for
                        their user first (Enter goes to one's tmux pane);
                        --host: another machine's, over ssh
  send TARGET [MESSAGE] send one of them a message (standard input without
                        MESSAGE, or with -); TARGET is a name, name#pid or an
                        instance id (HOST:NAME: on another machine, over
                        ssh); the exit status says what happened;
                        --wait waits for its receipt (exit status by outcome)
  mcp COMMAND           MCP servers: add NAME -- COMMAND [ARGS], add --transport
                        http NAME URL, list, get NAME, remove NAME, test NAME
  mcp serve             an MCP server (stdio) that lets another agent list these
                        instances, send one a task and read its receipt
  hooks COMMAND         hooks: list them; trust, refuse or reset the answers
                        about the project's (.zcoder/settings.json)
  tasks COMMAND         the repository's task board: list, add TITLE, done ID,
                        watch, claim ID|--next -- COMMAND (held while it runs)
  `zcoder agents --help` and `zcoder send --help` say more; see docs/relay.md."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder",
        usage=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
        epilog=COMMANDS,
    )
    from zcoder.options import build_arguments

    build_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run zcoder. An error that reaches here (zcoder.base.errors) is said on stderr, made
    visible, and ends the program with its exit code."""
    try:
        return _main(argv)
    except ZcoderError as exc:
        from zcoder.base.sanitize import screen_safe

        print(f"zcoder: {screen_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code


def _watch_agents(registry: Path, io_timeout: float) -> int:
    """``zcoder agents --watch``: the live view (Textual, so not in the relay)."""
    from zcoder.watch.app import run_watch

    return run_watch(registry, io_timeout)


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in ("agents", "send"):
        # The relay from scripts (zcoder.relay.scripts): no model, no UI.
        from zcoder.relay import agents_main, send_main

        if arguments[0] == "send":
            return send_main(arguments[1:])
        return agents_main(arguments[1:], watch=_watch_agents)
    if arguments[:2] == ["mcp", "serve"]:
        # The relay offered to other agents as an MCP server (zcoder.mcp.serve).
        from zcoder.mcp.serve import main as serve_main

        return serve_main(arguments[2:])
    if arguments and arguments[0] == "mcp":
        # MCP server configuration (zcoder.mcp.cli): no model, no UI.
        from zcoder.mcp.cli import main as mcp_main

        return mcp_main(arguments[1:])
    if arguments and arguments[0] == "hooks":
        # Hooks and the consent to a project's (zcoder.hooks.cli): no model, no UI.
        from zcoder.hooks.cli import main as hooks_main

        return hooks_main(arguments[1:])
    if arguments and arguments[0] == "tasks":
        # The repository's task board (zcoder.board.cli): no model, no UI.
        from zcoder.board.cli import main as tasks_main

        return tasks_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)

    from zcoder.config import load_config
    from zcoder.options import config_flags

    config = load_config(os.environ, **config_flags(args))

    if args.print_instructions:
        from zcoder.agent import describe_instructions, load_instructions
        from zcoder.base.sanitize import for_stream

        found = load_instructions(config.workspace, config.home)
        window = config.context_window.tokens if config.context_window else None
        if found:  # the repository's text: made visible on a terminal, exact to a pipe
            print(for_stream(found.render(window), sys.stdout))
        # Which files, their sizes and what was not read: made visible (their names).
        print(describe_instructions(found, window), file=sys.stderr)
        return EXIT_OK

    if args.prompt is None and not args.acp and sys.stdout.isatty():
        # The app will run: keys typed while it starts (a model loading) are kept for its
        # prompt, not echoed by the terminal (zcoder.early_keys).
        from zcoder import early_keys

        early_keys.hold()
    if args.connect is not None:
        return _run_connect(args, config)
    if not args.acp:
        if args.prompt is not None and not args.prompt.strip():
            print("zcoder: --prompt needs some text", file=sys.stderr)
            return EXIT_USAGE
        if args.output_format is not None and args.prompt is None:
            print("zcoder: --output-format and --json go with --prompt", file=sys.stderr)
            return EXIT_USAGE
    front_end = _run_acp if args.acp else _run_mode

    from zcoder.model.embedded import gguf_from

    gguf = gguf_from(args.gguf, os.environ)
    if gguf is None:
        return front_end(args, config)
    config, server = _start_gguf(config, gguf, keep_model=args.model is not None)
    # An editor's sessions (--acp) build their settings from the flags: the same server.
    args.backend, args.base_url, args.model = "openai", config.base_url, config.model
    try:
        return front_end(args, config)
    finally:
        server.stop()


def _run_mode(args: argparse.Namespace, config: Config) -> int:
    """``--prompt`` or the interactive UI, with ``config`` as resolved."""
    resume: str | None = None
    if args.resume is not None:  # before any UI or request: an unknown id is a usage error
        resume = _find_resumed(config, args.resume)
    if args.fork is not None:  # the copy is the session opened
        resume = _forked(config, args.fork)

    if args.prompt is not None:
        from zcoder.oneshot.input import prompt_with_input, read_piped_input
        from zcoder.oneshot.run import run_prompt

        dash = args.prompt.strip() == "-"
        piped = read_piped_input(wait=config.stdin_wait, to_the_end=dash)
        if dash:
            if piped is None or not piped.text.strip():
                print(
                    "zcoder: --prompt - reads the prompt from standard input, which gave "
                    "none (pipe the prompt in, or give it as --prompt TEXT)",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            if piped.truncated:
                print(f"zcoder: the prompt was cut: {piped.label()}", file=sys.stderr)
            text = piped.text
        else:
            text = prompt_with_input(args.prompt, piped)
        return run_prompt(
            config,
            text,
            resume,
            keep_model=args.model is not None,
            output_format=args.output_format or "text",
        )

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "zcoder: the interactive UI needs a terminal on stdin and stdout; "
            "use --prompt TEXT for one turn without it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    import gc

    # Start-up makes long-lived objects only (modules, classes, the first screen): the
    # collector would walk them again and again for nothing. It is turned back on, tuned,
    # once the app is up (zcoder.tui.state.collector).
    gc.disable()
    from zcoder.base.logfile import setup_logging

    setup_logging(config.home)  # the terminal is the app's: log records go to a file
    from zcoder.tui import run_app

    return run_app(config, resume=resume, keep_model=args.model is not None)


def _run_connect(args: argparse.Namespace, config: Config) -> int:
    """``--connect``: the TUI here, the agent there (zcoder.remote)."""
    # The agent's settings are the remote zcoder's: its environment, or its command line
    # in ZCODER_REMOTE_COMMAND (docs/remote.md).
    from zcoder.options import refusal

    refused = refusal(args, "connect")
    if refused is None and args.fork is not None:
        refused = "--fork does not go with --connect: fork on the remote host (/fork there)"
    if refused is not None:
        print(f"zcoder: {refused}", file=sys.stderr)
        return EXIT_USAGE
    from zcoder.base.ssh_target import Target

    target = Target.parse(args.connect)
    from zcoder.base.logfile import setup_logging
    from zcoder.remote.app import run_remote

    setup_logging(config.home)  # the terminal is the app's: log records go to a file

    return run_remote(config, target, os.environ, resume=args.resume)


def _run_acp(args: argparse.Namespace, config: Config) -> int:
    """``--acp``: the flags that name one turn or one workspace do not go with it."""
    from zcoder.options import editor_flags, refusal

    refused = refusal(args, "acp")
    if refused is not None:
        print(f"zcoder: {refused}", file=sys.stderr)
        return EXIT_USAGE
    from zcoder.acp.server import AcpOptions, run_acp

    flags = editor_flags(args)
    options = AcpOptions(dict(os.environ), flags, keep_model=args.model is not None)
    return run_acp(options, config)


def _start_gguf(config: Config, path: Path, *, keep_model: bool) -> tuple[Config, SharedServer]:
    """Start the embedded server for ``path``, or attach to the one another zcoder runs for
    it (zcoder.model.shared_embedded), and point the ``openai`` backend at it; an
    EmbeddedError that says why when it cannot start."""
    from dataclasses import replace

    from zcoder.model.embedded import EmbeddedError, plan_launch
    from zcoder.model.shared_embedded import attach_shared

    window = config.context_window.tokens if config.context_window is not None else None
    try:
        plan = plan_launch(path, window=window)

        def starting() -> None:
            print(
                f"zcoder: starting llama.cpp for {path.name} ({plan.n_ctx}-token window, "
                f"{plan.threads} threads)…",
                file=sys.stderr,
                flush=True,
            )

        server = attach_shared(
            plan, home=config.home, log_path=config.home / "embedded-server.log", on_start=starting
        )
    except EmbeddedError as exc:
        raise EmbeddedError(f"--gguf: {exc}") from exc
    model = config.model if keep_model else plan.alias
    started = replace(
        config,
        backend="openai",
        base_url=server.base_url,
        api_key=server.key,
        model=model,
        gguf=path,
        server_places=server.slots,
    )
    return started, server


def _forked(config: Config, typed: str) -> str:
    """The id of a new copy of the session ``--fork`` names (SessionStore.fork)."""
    from zcoder.sessions import SessionStore

    source = _find_resumed(config, typed)
    with SessionStore(config.home) as store:
        return store.fork(source, config.workspace, config.profile.value).id


def _find_resumed(config: Config, typed: str) -> str:
    """The full id of the session ``--resume`` names; a ResumeError (a usage error) or a
    SessionStoreError says why there is none."""
    from zcoder.frontend.resume import find_session
    from zcoder.sessions import SessionStore

    with SessionStore(config.home) as store:
        return find_session(store, typed, config.workspace, config.profile.value).id
