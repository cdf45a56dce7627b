"""Command-line parsing, mode selection and exit codes; nothing else."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zcoder import __version__

if TYPE_CHECKING:
    from pathlib import Path

    from zcoder.config import Config
    from zcoder.model.embedded import EmbeddedServer

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


# The relay's commands are parsed by zcoder.relay.scripts (see main), so argparse does
# not know them: help lists them here, in its own words, with the options they take.
USAGE = """%(prog)s [options]
       %(prog)s --acp [options]
       %(prog)s --connect [USER@]HOST[:PORT][/PATH] [--resume ID]
       %(prog)s agents [--json]
       %(prog)s send [--json] TARGET [MESSAGE]
       %(prog)s mcp add|list|get|remove|test ...
       %(prog)s mcp serve
       %(prog)s hooks list|trust|refuse|reset"""
DESCRIPTION = """\
A terminal coding agent for local Ollama models. Several zcoder instances on
one machine can find each other and hand each other work over a private relay.

Without a command or --prompt, zcoder starts its interactive terminal UI."""
COMMANDS = """\
commands:
  agents [--json]       list the live zcoder instances on this machine (name,
                        project, pid, state, id, workspace); --json: one array
  send TARGET [MESSAGE] send one of them a message (standard input without
                        MESSAGE, or with -); TARGET is a name, name#pid or an
                        instance id; the exit status says what happened
  mcp COMMAND           MCP servers: add NAME -- COMMAND [ARGS], add --transport
                        http NAME URL, list, get NAME, remove NAME, test NAME
  mcp serve             an MCP server (stdio) that lets another agent list these
                        instances, send one a task and read its receipt
  hooks COMMAND         hooks: list them; trust, refuse or reset the answers
                        about the project's (.zcoder/settings.json)
  `zcoder agents --help` and `zcoder send --help` say more; see docs/relay.md."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder",
        usage=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
        epilog=COMMANDS,
    )
    parser.add_argument("-m", "--model", help="the model (default $ZCODER_MODEL or qwen3-coder)")
    parser.add_argument(
        "--host", help="Ollama endpoint (default $OLLAMA_HOST or http://127.0.0.1:11434)"
    )
    parser.add_argument(
        "--backend",
        metavar="ollama|openai",
        help="the model server's API: ollama (default $ZCODER_BACKEND or ollama), or openai "
        "for llama.cpp's llama-server, LM Studio or vLLM",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the OpenAI-compatible server (default $ZCODER_BASE_URL or "
        "http://127.0.0.1:8080/v1; implies --backend openai); its key: $ZCODER_API_KEY",
    )
    parser.add_argument(
        "--gguf",
        metavar="FILE",
        help="run this GGUF model file in zcoder's own llama.cpp server (default "
        "$ZCODER_GGUF; needs pip install 'zcoder[local]'; see docs/models.md)",
    )
    parser.add_argument(
        "-w", "--workspace", help="the only directory file tools may touch (default: here)"
    )
    parser.add_argument("--profile", choices=["coding", "sysadmin"], help="default coding")
    parser.add_argument(
        "-p",
        "--prompt",
        metavar="TEXT",
        help="run one turn and exit; piped standard input goes after TEXT, and - reads "
        "the prompt itself from standard input",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--output-format",
        choices=["text", "json"],
        default=None,
        help="with --prompt: text (default) streams the answer; json prints one JSON "
        "object (reply, tool calls, usage, exit status) and nothing else on stdout",
    )
    output.add_argument(
        "--json",
        dest="output_format",
        action="store_const",
        const="json",
        help="the same as --output-format json",
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--yes", action="store_true", help="run commands without asking (coding profile only)"
    )
    policy.add_argument(
        "--deny-commands", action="store_true", help="refuse every command without asking"
    )
    parser.add_argument(
        "--resume",
        metavar="ID",
        help="open a saved session of this workspace (its id, or a unique prefix of it: "
        "/sessions lists them)",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="this instance's name for other agents (default $ZCODER_AGENT_NAME, else the"
        " project's directory name)",
    )
    parser.add_argument("--no-think", action="store_true", help='send "think": false')
    parser.add_argument(
        "--context-window",
        metavar="N",
        help="context window in tokens, sent as num_ctx (default: $ZCODER_CONTEXT_WINDOW, "
        "settings.json, else sized from what Ollama reports; see docs/models.md)",
    )
    parser.add_argument(
        "--acp",
        action="store_true",
        help="speak the Agent Client Protocol on standard input and output, for an editor "
        "or a script (docs/editors.md); each session's workspace is the client's cwd",
    )
    parser.add_argument(
        "--connect",
        metavar="[USER@]HOST[:PORT][/PATH]",
        help="this TUI, the agent on another machine: ssh runs zcoder --acp there "
        "(docs/remote.md); --resume ID loads a session saved there",
    )
    parser.add_argument(
        "--print-instructions",
        action="store_true",
        help="print the resolved AGENTS.md chain and exit",
    )
    parser.add_argument("-V", "--version", action="version", version=f"zcoder {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in ("agents", "send"):
        # The relay from scripts (zcoder.relay.scripts): no model, no UI.
        from zcoder.relay import agents_main, send_main

        run = agents_main if arguments[0] == "agents" else send_main
        return run(arguments[1:])
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
    parser = build_parser()
    args = parser.parse_args(arguments)

    from zcoder.config import ConfigError, load_config

    try:
        config = load_config(
            os.environ,
            model=args.model,
            host=args.host,
            workspace=args.workspace,
            profile=args.profile,
            yes=args.yes,
            deny_commands=args.deny_commands,
            no_think=args.no_think,
            backend=args.backend,
            base_url=args.base_url,
            context_window=args.context_window,
            name=args.name,
        )
    except ConfigError as exc:
        from zcoder.base.sanitize import screen_safe

        print(f"zcoder: {screen_safe(str(exc))}", file=sys.stderr)
        return EXIT_USAGE

    if args.print_instructions:
        from zcoder.agent import load_instructions, render_instructions
        from zcoder.base.sanitize import for_stream

        files = load_instructions(config.workspace, config.home)
        if not files:
            print("No AGENTS.md files apply to this workspace.")
        else:  # the repository's text: made visible on a terminal, exact to a pipe
            print(for_stream(render_instructions(files), sys.stdout))
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
    started = _start_gguf(config, gguf, keep_model=args.model is not None)
    if isinstance(started, int):
        return started
    config, server = started
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
        found = _find_resumed(config, args.resume)
        if isinstance(found, int):
            return found
        resume = found

    if args.prompt is not None:
        from zcoder.oneshot import run_prompt
        from zcoder.oneshot_input import prompt_with_input, read_piped_input

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
    # once the app is up (zcoder.tui.collector).
    gc.disable()
    from zcoder.base.logfile import setup_logging

    setup_logging(config.home)  # the terminal is the app's: log records go to a file
    from zcoder.tui import run_app

    return run_app(config, resume=resume, keep_model=args.model is not None)


def _run_connect(args: argparse.Namespace, config: Config) -> int:
    """``--connect``: the TUI here, the agent there (zcoder.remote)."""
    # The agent's settings are the remote zcoder's: its environment, or its command line
    # in ZCODER_REMOTE_COMMAND (docs/remote.md).
    for flag, value in (
        ("--acp", args.acp),
        ("--prompt", args.prompt),
        ("--output-format", args.output_format),
        ("-m/--model", args.model),
        ("--host", args.host),
        ("--backend", args.backend),
        ("--base-url", args.base_url),
        ("--gguf", args.gguf),
        ("-w/--workspace", args.workspace),
        ("--profile", args.profile),
        ("--yes", args.yes),
        ("--deny-commands", args.deny_commands),
        ("--name", args.name),
        ("--no-think", args.no_think),
        ("--context-window", args.context_window),
    ):
        if value not in (None, False):
            print(
                f"zcoder: {flag} does not go with --connect: the agent is the remote zcoder's "
                "(give it in ZCODER_REMOTE_COMMAND, or the path in the target)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    from zcoder.remote.target import Target, TargetError

    try:
        target = Target.parse(args.connect)
    except TargetError as exc:
        print(f"zcoder: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from zcoder.base.logfile import setup_logging
    from zcoder.remote.app import run_remote

    setup_logging(config.home)  # the terminal is the app's: log records go to a file

    return run_remote(config, target, os.environ, resume=args.resume)


def _run_acp(args: argparse.Namespace, config: Config) -> int:
    """``--acp``: the flags that name one turn or one workspace do not go with it."""
    for given, flag in (
        (args.prompt is not None, "--prompt"),
        (args.output_format is not None, "--output-format"),
        (args.resume is not None, "--resume"),
        (args.workspace is not None, "-w/--workspace"),
    ):
        if given:
            print(
                f"zcoder: {flag} does not go with --acp (the client opens sessions, "
                "each in its own cwd)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    from zcoder.acp.server import AcpOptions, run_acp

    flags = {
        "model": args.model,
        "host": args.host,
        "profile": args.profile,
        "yes": args.yes,
        "deny_commands": args.deny_commands,
        "no_think": args.no_think,
        "backend": args.backend,
        "base_url": args.base_url,
        "context_window": args.context_window,
        "name": args.name,
    }
    options = AcpOptions(dict(os.environ), flags, keep_model=args.model is not None)
    return run_acp(options, config)


def _start_gguf(
    config: Config, path: Path, *, keep_model: bool
) -> tuple[Config, EmbeddedServer] | int:
    """Start the embedded server for ``path`` (zcoder.model.embedded) and point the
    ``openai`` backend at it; the exit code after saying why when it cannot start."""
    from dataclasses import replace

    from zcoder.model.embedded import EmbeddedError, plan_launch, start_embedded

    window = config.context_window.tokens if config.context_window is not None else None
    try:
        plan = plan_launch(path, window=window)
        print(
            f"zcoder: starting llama.cpp for {path.name} ({plan.n_ctx}-token window, "
            f"{plan.threads} threads)…",
            file=sys.stderr,
            flush=True,
        )
        server = start_embedded(plan, log_path=config.home / "embedded-server.log")
    except EmbeddedError as exc:
        print(f"zcoder: --gguf: {exc}", file=sys.stderr)
        return EXIT_FAILED
    model = config.model if keep_model else plan.alias
    started = replace(config, backend="openai", base_url=server.base_url, model=model, gguf=path)
    return started, server


def _find_resumed(config: Config, typed: str) -> str | int:
    """The full id of the session ``--resume`` names, or the exit code after saying why."""
    from zcoder.base.sanitize import screen_safe
    from zcoder.resume import ResumeError, find_session
    from zcoder.sessions import SessionStore, SessionStoreError

    try:
        with SessionStore(config.home) as store:
            return find_session(store, typed, config.workspace, config.profile.value).id
    except ResumeError as exc:  # it names the workspace, whatever its directory is called
        print(f"zcoder: {screen_safe(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except SessionStoreError as exc:
        print(f"zcoder: {exc}", file=sys.stderr)
        return EXIT_FAILED
