"""The lessons' own text (markdown cells): one register, one course map, every "다음" line true.

- Register: every sentence, heading, table cell and list item of a markdown cell is in 합니다체
  (the rule is the catalog's, :func:`tests.test_catalog_register.register_slips`).
- Course map: each lesson's "과정에서의 위치" line lists exactly the notebooks in ``notebooks/``,
  in order, with the lesson itself in bold; its "**다음**" line names the next notebook that
  exists, and only the last lesson says the course ends.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.test_catalog_register import (
    CODE_SPAN,
    english_outside_parentheses,
    internal_values,
    register_slips,
)

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NUMBERS = [p.name[:2] for p in NOTEBOOKS]
#: A line that starts a block of its own (a heading, a list item, a table row, a quote).
BLOCK_START = re.compile(r"^\s*(?:#|[-*+]\s|\d+\.\s|\||>|$)")


def markdown_prose(source: str) -> str:
    """The text a student reads in a markdown cell, one paragraph per line.

    Code (fenced blocks, backtick spans), math, link targets and HTML tags are dropped; lines of
    one paragraph are joined (a single line break inside a paragraph does not end a sentence).
    """
    source = re.sub(r"```.*?```", " ", source, flags=re.S)
    source = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", source, flags=re.S)
    source = CODE_SPAN.sub(" ", source)
    source = re.sub(r"\]\([^)]*\)", "]", source)
    source = re.sub(r"<(?!br)[^>]+>", " ", source)
    lines: list[str] = []
    for line in source.splitlines():
        continues = (line.strip() and not BLOCK_START.match(line)
                     and lines and lines[-1].strip() and not re.match(r"^\s*[#|]", lines[-1]))
        if continues:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return "\n".join(lines)


def _markdown(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_lesson_text_is_in_hamnida_style(path: Path) -> None:
    wrong = {f"cell {i}": slips for i, source in _markdown(path)
             if (slips := register_slips(markdown_prose(source)))}
    title = nbformat.read(path, as_version=4).metadata.get("title", "")
    if slips := register_slips(title):
        wrong["metadata.title"] = slips
    assert not wrong, wrong


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_course_map_lists_every_lesson_that_exists(path: Path) -> None:
    header = _markdown(path)[0][1]
    line = next(ln for ln in header.splitlines() if ln.startswith("**과정에서의 위치**"))
    steps = line.split(":", 1)[1].split("→")
    assert [re.sub(r"\D", "", s)[:2] for s in steps] == NUMBERS, line
    bold = [s.strip() for s in steps if s.strip().startswith("**")]
    assert len(bold) == 1 and bold[0].startswith(f"**{path.name[:2]} "), line


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_next_line_names_the_next_lesson_that_exists(path: Path) -> None:
    text = "\n".join(source for _, source in _markdown(path))
    nexts = [ln for ln in text.splitlines() if ln.startswith("**다음**")]
    ends = "과정이 끝납니다" in text or "과정을 마칩니다" in text
    index = NUMBERS.index(path.name[:2])
    if index == len(NUMBERS) - 1:
        assert ends and not nexts, "the last lesson closes the course and points nowhere"
        return
    assert len(nexts) == 1, nexts
    assert not ends, "only the last lesson closes the course"
    named = re.match(r"\*\*다음\*\*:\s*(\d\d)\b", nexts[0])
    assert named and named.group(1) == NUMBERS[index + 1], nexts[0]


@pytest.mark.parametrize(("source", "slips"), [
    ("## 3. util.gpu는 무엇을 재는가\n\n본문입니다.", 1),
    ("가동률이 20 %인 학교에서는 임대료보다\n비쌉니다.", 0),  # one paragraph on two lines
    ("| 선수 지식 | 메모 |\n|---|---|\n| 비율 | %를 오간다 |", 1),
    ("- 첫째 항목입니다\n- 둘째는 이렇다", 1), ("`ratio = a / b`라고 씁니다.", 0),
])
def test_markdown_prose_keeps_the_units_a_student_reads(source: str, slips: int) -> None:
    assert len(register_slips(markdown_prose(source))) == slips


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_throughput_is_written_in_korean_with_the_english_unit_once(path: Path) -> None:
    # issue 17's trial: "tokens/s" in 05/06's text beside "토큰/초" in the widgets; one Korean
    # unit, the English one in parentheses at most once, the first time
    prose = "\n".join(markdown_prose(source) for _, source in _markdown(path))
    bare = [m.start() for m in re.finditer(r"tokens/s", prose)
            if not prose[:m.start()].endswith("(")]
    assert not bare, [prose[max(0, i - 20):i + 10] for i in bare]
    assert prose.count("(tokens/s)") <= 1
    if "(tokens/s)" in prose:  # beside the first 토큰/초
        assert prose.find("토큰/초(tokens/s)") == prose.find("토큰/초") >= 0


#: A publication's title as a reference list writes it: in italics or in double quotes.
TITLE = re.compile(r"\*[^*\n]+\*|\"[^\"\n]+\"")


def reference_titles_outside_parentheses(source: str) -> list[str]:
    """English titles in a markdown cell's reference list ("**참고 자료**") not in parentheses.

    A reference leads with a Korean description; the original title follows in parentheses
    (a proper name): ``- Meta의 Llama 3 기술 보고서(*The Llama 3 Herd of Models*, 2024)``.
    """
    _, found, refs = source.partition("**참고 자료**")
    wrong = []
    for line in refs.splitlines() if found else ():
        if not line.lstrip().startswith("- "):
            continue
        line = CODE_SPAN.sub(" ", line)
        for m in TITLE.finditer(line):
            before = line[:m.start()]
            inside = before.count("(") > before.count(")")
            if not inside and not re.search(r"[가-힣]", m.group(0)):
                wrong.append(m.group(0))
    return wrong


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_reference_lists_lead_with_korean_and_keep_titles_in_parentheses(path: Path) -> None:
    wrong = {f"cell {i}": titles for i, source in _markdown(path)
             if (titles := reference_titles_outside_parentheses(source))}
    assert not wrong, wrong


@pytest.mark.parametrize(("line", "wrong"), [
    ("- Kokolis et al., *Revisiting Reliability*, HPCA 2025.", ["*Revisiting Reliability*"]),
    ("- 신뢰성 연구(Kokolis 외, *Revisiting Reliability*, HPCA 2025).", []),
    ("- SemiAnalysis, \"GPU Cloud Economics Explained\" (2023-12).",
     ["\"GPU Cloud Economics Explained\""]),
    ("- NVIDIA, *DGX H100/H200 사용자 안내서*: 10.2 kW.", []),
])
def test_the_reference_rule(line: str, wrong: list[str]) -> None:
    assert reference_titles_outside_parentheses(f"**참고 자료**\n{line}\n") == wrong


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_lesson_prose_has_no_english_outside_parentheses_or_internal_values(path: Path) -> None:
    wrong: dict[str, list[str]] = {}
    for i, source in _markdown(path):
        for line in markdown_prose(source).splitlines():
            bad = english_outside_parentheses(line)  # proper names: test_catalog_register.TERMS
            bad += internal_values(line)
            if bad:
                wrong.setdefault(f"cell {i}", []).extend(f"{b} in {line.strip()[:60]!r}"
                                                         for b in bad)
    assert not wrong, wrong
