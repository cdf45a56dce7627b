"""What heads a tool call (zcoder.agent.headings): one function for the TUI, an editor's
tool call title and --connect's view."""

from __future__ import annotations

import pytest

from tests.fixtures.processes import fresh_python_lines
from zcoder.acp.updates import tool_title
from zcoder.agent.headings import MAX_DETAIL_CHARS, VERBS, call_heading, tool_from_heading
from zcoder.remote.events import tool_name


@pytest.mark.parametrize(
    ("name", "arguments", "heading"),
    [
        ("write_file", {"path": "q.sql", "content": "SELECT 1;\n"}, "Write q.sql"),
        ("read_file", {"path": "src/a.py"}, "Read src/a.py"),
        (
            "read_file_range",
            {"path": "a.py", "start_line": 3, "end_line": 9},
            "Read a.py (lines 3–9)",
        ),
        ("list_files", {}, "List ."),
        ("replace_text", {"path": "a.py", "old_text": "x", "new_text": "y"}, "Edit a.py"),
        ("search", {"query": "TODO", "path": "src"}, 'Search "TODO" in src'),
        ("search", {"query": "TODO", "path": "."}, 'Search "TODO"'),
        ("run_command", {"command": "ls -la"}, "ls -la"),
        ("run_command", {"command": "make", "cwd": "sub"}, "make (in sub)"),
        ("apply_patch", {"patch": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n"}, "Patch x.py"),
        (
            "send_agent_message",
            {"target_instance_id": "weekly-digest", "message": "hi"},
            "Message to weekly-digest",
        ),
        ("send_agent_message", {"target": "api", "message": "hi"}, "Message to api"),
        ("list_agents", {}, "List agents"),
        ("mcp__git__git_log", {"max_count": 3, "repo_path": "/r"}, "git: git_log /r"),
        ("mcp__time__get_current_time", {"timezone": "UTC"}, "time: get_current_time UTC"),
        ("activate_skill", {"name": "pdf"}, "Use skill pdf"),
        ("finish", {"status": "done", "response": "ok"}, "Finish (done)"),
    ],
)
def test_a_call_is_headed_by_what_a_person_reads(
    name: str, arguments: dict[str, object], heading: str
) -> None:
    assert call_heading(name, arguments) == heading
    assert tool_title(name, arguments) == heading  # the editor's title is the same text


def test_a_long_or_many_line_argument_is_cut_in_the_heading() -> None:
    long = call_heading("read_file", {"path": "d/" * 200})
    assert len(long) == len("Read ") + MAX_DETAIL_CHARS and long.endswith("…")
    many = call_heading("mcp__db__query", {"sql": "SELECT 1;\nDROP TABLE users;"})
    assert many == "db: query SELECT 1; …"


def test_connect_reads_the_tool_back_from_the_heading() -> None:
    for name in VERBS:
        heading = call_heading(name, {"path": "a.py", "name": "n", "skill": "s"})
        assert tool_from_heading(heading) in (name, name.removesuffix("_range")), heading
    assert tool_name("execute", "ls -la") == "run_command"
    # An MCP tool's title stays whole, and heads the call the same way on this side.
    title = call_heading("mcp__git__git_log", {"repo_path": "/r"})
    assert call_heading(tool_name("other", title), {"repo_path": "/r"}) == title


def test_the_names_written_out_here_are_the_tools_own() -> None:
    from zcoder.agent import headings, relay_tools
    from zcoder.skills.tools import ACTIVATE_SKILL, READ_SKILL_FILE
    from zcoder.tools.catalog import LOAD_TOOL
    from zcoder.tools.finish import FINISH_TOOL_NAME

    assert headings.SEND_AGENT_MESSAGE == relay_tools.SEND_AGENT_MESSAGE
    assert headings.LIST_AGENTS == relay_tools.LIST_AGENTS
    assert (headings.TARGET, headings.TARGET_ALIAS) == (
        relay_tools.TARGET,
        relay_tools.TARGET_ALIAS,
    )
    assert headings.LOAD_TOOL == LOAD_TOOL
    assert (headings.ACTIVATE_SKILL, headings.READ_SKILL_FILE) == (ACTIVATE_SKILL, READ_SKILL_FILE)
    assert headings.FINISH_TOOL_NAME == FINISH_TOOL_NAME


def test_the_tui_heads_calls_without_loading_the_mcp_client_or_the_relay_tools() -> None:
    # The transcript imports the headings at start-up: they must cost the first frame
    # nothing (the MCP client's modules alone took a third of a second).
    code = (
        "import sys, zcoder.cli, zcoder.tui.app\n"
        "heavy = ('zcoder.mcp.tools', 'zcoder.mcp.manager', 'zcoder.agent.relay_tools',"
        " 'zcoder.skills.tools', 'mcp')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert fresh_python_lines(code) == ["[]"]
