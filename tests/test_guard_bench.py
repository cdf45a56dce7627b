"""make bench's guard figures: what they count, and that --guard rewrites only its section."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import guard, report

from tests.tools.guard_corpus import DESTRUCTIVE, ORDINARY
from zcoder.tools import Verdict


@pytest.fixture(scope="module")
def figures() -> guard.GuardFigures:
    return guard.run()


def test_the_figures_count_every_corpus_command(figures: guard.GuardFigures) -> None:
    assert sum(figures.destructive.values()) == len(DESTRUCTIVE)
    assert sum(figures.ordinary.values()) == len(ORDINARY)
    assert len(figures.missed) == figures.destructive[Verdict.ALLOW]
    assert len(figures.ordinary_warned) == figures.ordinary[Verdict.WARN]
    caught, refused = guard.targets(figures)
    assert caught.met is (len(figures.missed) <= 0.05 * len(DESTRUCTIVE))
    assert refused.met is (figures.ordinary[Verdict.REFUSE] == 0)


def test_the_parsers_are_compared_on_the_corpus_and_the_probes(
    figures: guard.GuardFigures,
) -> None:
    names = [p.name for p in figures.parsers]
    assert names[0] == "tree-sitter-bash"
    for parser in figures.parsers:
        assert parser.parsed + len(parser.failed) == len(DESTRUCTIVE) + len(ORDINARY)
        assert set(parser.probes) == {construct for construct, _, _ in guard.PROBES}
    tree_sitter = figures.parsers[0]
    assert tree_sitter.probes["case"] and tree_sitter.probes["ANSI-C quoting $'...' kept decodable"]
    verdicts, comparison = guard.tables(figures)
    assert [row[0] for row in verdicts.rows] == ["obfuscated destructive", "ordinary sysadmin"]
    assert comparison.headers[1:] == names


def test_the_guard_section_is_replaced_in_place(
    figures: guard.GuardFigures, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Title\n\n## Results\n\nrelay tables\n\n## Method\n\nhow\n")
    monkeypatch.setattr(report, "DOC", doc)
    section = report.guard_section(guard.targets(figures), guard.tables(figures))
    report.write_guard_section(section)
    first = doc.read_text()
    assert first.index("relay tables") < first.index("## The sysadmin guard")
    assert first.index("## The sysadmin guard") < first.index("## Method")
    report.write_guard_section(section.replace("obfuscated destructive", "OBFUSCATED"))
    second = doc.read_text()
    assert second.count("## The sysadmin guard") == 1
    assert "OBFUSCATED" in second and "relay tables" in second and "## Method\n\nhow" in second
