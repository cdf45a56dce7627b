"""The sysadmin guard's figures: its verdicts on the corpus, and the two shell parsers compared.

``python -m bench --guard`` runs only this (a few seconds) and rewrites only the guard's
section of docs/performance.md; ``make bench`` runs it with everything else.

The corpus is tests/tools/guard_corpus.py: obfuscated destructive commands, each of which
must be refused or warned, and ordinary sysadmin commands, none of which may be refused.
The parser comparison counts, for bashlex and tree-sitter-bash, how many corpus lines each
parses without an error, and which shell constructs each parses into something the guard
can walk (the command inside a substitution, a here-document or a function found as a
command; ANSI-C quoting kept decodable).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.tools.guard_corpus import DESTRUCTIVE, ORDINARY, WORKSPACE

from bench.relay_bench import Table, Target
from zcoder.tools.guard import Verdict, check_command
from zcoder.tools.guard.parse import parse

# (construct, a line using it, the command the parser must find inside, or a check name)
PROBES: list[tuple[str, str, str]] = [
    ("command substitution $(...)", "echo $(id -u)", "id"),
    ("backticks", "echo `id -u`", "id"),
    ("nested substitution", "echo $(echo $(id -u))", "id"),
    ("substitution in double quotes", 'echo "user: $(id -u)"', "id"),
    ("process substitution <(...)", "diff <(id) <(ls /)", "id"),
    ("here-document, commands in its body", "cat <<EOF\nuser $(id -u)\nEOF", "id"),
    ("here-document into a shell, quoted", "bash <<'EOF'\nid\nEOF", "bash"),
    ("here-string", "bash <<< 'id'", "bash"),
    ("arithmetic expansion $((...))", "echo $((1 + 2)); id", "id"),
    ("arithmetic command ((...))", "(( x++ )); id", "id"),
    ("case", "case $x in a) id ;; *) ls ;; esac", "id"),
    ("function f() {...}", "f() { id; }; f", "id"),
    ("function keyword", "function f { id; }; f", "id"),
    ("[[ ... ]] test", "[[ -f /etc/hosts && -n $x ]] && id", "id"),
    ("indexed array", "a=(1 2 3); echo ${a[@]}; id", "id"),
    ("associative array", "declare -A m=([k]=v); id", "id"),
    ("ANSI-C quoting $'...' kept decodable", "$'\\x72\\x6d' -rf /tmp/x", "ansi"),
    ("brace expansion", "echo /{etc,usr}; id", "id"),
    ("for loop", "for f in *.log; do id; done", "id"),
    ("while read < file", "while read -r l; do id; done < /etc/hosts", "id"),
    ("if / elif / else", "if true; then ls; elif false; then id; else ls; fi", "id"),
    ("parameter expansion ${x:-d} ${x//a/b}", "echo ${x:-d} ${y//a/b}; id", "id"),
    ("redirections 2>&1 and &>", "id 2>&1 | tee /tmp/l; ls &> /dev/null", "id"),
    ("negation, subshell, group", "! ls && (cd /; id) || { ls; }", "id"),
    ("comment", "id # rm -rf /", "id"),
    ("line continuation", "i\\\nd -u", "id"),
]


@dataclass
class ParserFigures:
    name: str
    parsed: int = 0
    failed: list[str] = field(default_factory=list)
    probes: dict[str, bool] = field(default_factory=dict)
    micros: float = 0.0


@dataclass
class GuardFigures:
    destructive: dict[Verdict, int]
    ordinary: dict[Verdict, int]
    missed: list[str]
    ordinary_warned: list[tuple[str, str]]
    micros_per_line: float
    parsers: list[ParserFigures]


def _ts_parses(line: str) -> bool:
    return not parse(line).has_error


def _ts_commands(line: str) -> Iterator[str]:
    stack = [parse(line)]
    while stack:
        node = stack.pop()
        if node.type == "command":
            name = node.child_by_field_name("name")
            if name is not None and name.text is not None:
                yield name.text.decode().replace("\\\n", "")
        stack.extend(node.children)


def _ts_ansi(line: str) -> bool:
    stack = [parse(line)]
    while stack:
        node = stack.pop()
        if node.type == "ansi_c_string" and node.text == b"$'\\x72\\x6d'":
            return True
        stack.extend(node.children)
    return False


def _bashlex_parse(line: str) -> list[Any]:
    import bashlex  # type: ignore[import-untyped]

    parsed: list[Any] = bashlex.parse(line)
    return parsed


def _bashlex_parses(line: str) -> bool:
    try:
        _bashlex_parse(line)
    except Exception:  # noqa: BLE001 - any failure of the parser counts as not parsed
        return False
    return True


def _bashlex_commands(line: str) -> Iterator[str]:
    import bashlex

    found: list[str] = []

    class Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
        def visitcommand(self, node: Any, parts: list[Any]) -> None:
            words = [p for p in parts if p.kind == "word"]
            if words:
                found.append(words[0].word)

    try:
        trees = _bashlex_parse(line)
    except Exception:  # noqa: BLE001
        return iter(())
    for tree in trees:
        Visitor().visit(tree)
    return iter(found)


def _bashlex_ansi(line: str) -> bool:
    try:
        trees = _bashlex_parse(line)
    except Exception:  # noqa: BLE001
        return False
    return "$'\\x72\\x6d'" in repr(trees) or "\\\\x72\\\\x6d" in repr(trees)


def _measure_parser(
    name: str,
    parses: Callable[[str], bool],
    commands: Callable[[str], Iterator[str]],
    ansi: Callable[[str], bool],
    corpus: list[str],
) -> ParserFigures:
    figures = ParserFigures(name)
    times: list[float] = []
    for line in corpus:
        started = time.perf_counter()
        ok = parses(line)
        times.append(time.perf_counter() - started)
        if ok:
            figures.parsed += 1
        else:
            figures.failed.append(line)
    figures.micros = statistics.median(times) * 1e6
    for construct, line, want in PROBES:
        if want == "ansi":
            figures.probes[construct] = ansi(line)
        else:
            figures.probes[construct] = parses(line) and want in set(commands(line))
    return figures


def parsers(corpus: list[str]) -> list[ParserFigures]:
    """tree-sitter-bash and bashlex on the corpus and the construct probes."""
    figures = [_measure_parser("tree-sitter-bash", _ts_parses, _ts_commands, _ts_ansi, corpus)]
    try:
        import bashlex  # noqa: F401
    except ImportError:
        return figures
    figures.append(
        _measure_parser("bashlex", _bashlex_parses, _bashlex_commands, _bashlex_ansi, corpus)
    )
    return figures


def run() -> GuardFigures:
    corpus = DESTRUCTIVE + ORDINARY
    destructive = dict.fromkeys(Verdict, 0)
    ordinary = dict.fromkeys(Verdict, 0)
    missed: list[str] = []
    warned: list[tuple[str, str]] = []
    times: list[float] = []
    for command in DESTRUCTIVE:
        started = time.perf_counter()
        verdict = check_command(command, WORKSPACE)
        times.append(time.perf_counter() - started)
        destructive[verdict.verdict] += 1
        if verdict.verdict is Verdict.ALLOW:
            missed.append(command)
    for command in ORDINARY:
        started = time.perf_counter()
        verdict = check_command(command, WORKSPACE)
        times.append(time.perf_counter() - started)
        ordinary[verdict.verdict] += 1
        if verdict.verdict is Verdict.WARN:
            warned.append((command, verdict.reason or ""))
    return GuardFigures(
        destructive=destructive,
        ordinary=ordinary,
        missed=missed,
        ordinary_warned=warned,
        micros_per_line=statistics.median(times) * 1e6,
        parsers=parsers(corpus),
    )


def targets(figures: GuardFigures) -> list[Target]:
    total = len(DESTRUCTIVE)
    caught = figures.destructive[Verdict.REFUSE] + figures.destructive[Verdict.WARN]
    return [
        Target(
            "guard: obfuscated destructive commands refused or warned",
            "≥ 95%",
            f"{caught} of {total} ({100 * caught / total:.1f}%)",
            caught >= 0.95 * total,
        ),
        Target(
            "guard: ordinary sysadmin commands refused",
            "0",
            f"{figures.ordinary[Verdict.REFUSE]} of {len(ORDINARY)}",
            figures.ordinary[Verdict.REFUSE] == 0,
        ),
    ]


def _code(text: str) -> str:
    shown = text.replace("\n", "⏎")
    return "`` " + shown + " ``" if "`" in shown else "`" + shown + "`"


def tables(figures: GuardFigures) -> list[Table]:
    verdicts = Table(
        "The guard on its corpus (tests/tools/guard_corpus.py)",
        ["set", "commands", "refused", "warned", "allowed"],
    )
    for name, counts, total in (
        ("obfuscated destructive", figures.destructive, len(DESTRUCTIVE)),
        ("ordinary sysadmin", figures.ordinary, len(ORDINARY)),
    ):
        verdicts.rows.append(
            [
                name,
                str(total),
                str(counts[Verdict.REFUSE]),
                str(counts[Verdict.WARN]),
                str(counts[Verdict.ALLOW]),
            ]
        )
    verdicts.notes.append(
        f"Median time of one verdict: {figures.micros_per_line:.0f} µs (parse and walk)."
    )
    if figures.missed:
        verdicts.notes.append(
            "Destructive commands allowed: " + ", ".join(_code(c) for c in figures.missed) + "."
        )
    if figures.ordinary_warned:
        verdicts.notes.append(
            "Ordinary commands warned: "
            + "; ".join(f"{_code(c)} ({why})" for c, why in figures.ordinary_warned)
            + "."
        )
    corpus_size = len(DESTRUCTIVE) + len(ORDINARY)
    comparison = Table(
        "Shell parsers compared (the guard uses tree-sitter-bash)",
        ["construct", *(p.name for p in figures.parsers)],
    )
    comparison.rows.append(
        [
            f"corpus lines parsed without error (of {corpus_size})",
            *(str(p.parsed) for p in figures.parsers),
        ]
    )
    comparison.rows.append(
        ["median parse time per corpus line", *(f"{p.micros:.0f} µs" for p in figures.parsers)]
    )
    for construct, _, _ in PROBES:
        comparison.rows.append(
            [construct, *("yes" if p.probes[construct] else "NO" for p in figures.parsers)]
        )
    comparison.notes.append(
        "A construct row says whether the parser parses a line using it into a tree where "
        "the command inside (the substitution's, the here-document's, the function's…) is "
        "found as a command, or, for ANSI-C quoting, keeps the escapes so they can be "
        "decoded."
    )
    for parser in figures.parsers:
        if parser.failed:
            shown = ", ".join(_code(line) for line in parser.failed[:8])
            more = len(parser.failed) - 8
            comparison.notes.append(
                f"{parser.name} failed on {len(parser.failed)} corpus lines, e.g. {shown}"
                + (f" and {more} more." if more > 0 else ".")
            )
    if len(figures.parsers) < 2:
        comparison.notes.append("bashlex is not installed here; only tree-sitter-bash measured.")
    return [verdicts, comparison]
