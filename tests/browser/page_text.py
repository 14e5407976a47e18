"""What a page shows a reader, read from a real browser: visible text, attributes, chart text.

:func:`page_texts` collects, from the page as chromium renders it, every text a student reads:
the visible text of each cell (``innerText``, line by line, with code shown as code — ``<code>``,
``<pre>``, a code cell's editor — left out, as the catalog rules skip it), the attributes a
pointer or a screen reader shows (``title``, ``aria-label``, ``placeholder``, ``alt``), the
options of every drop-down, the tab's title, and the text plotly draws in its SVG (titles,
axes, ticks, legends, annotations). :func:`findings` applies the course's rules
(``tests/test_catalog_register.py``: English outside parentheses, internal values) with the
per-lesson allow list of ``tests/test_rendered_korean.py`` (one list for both scans);
:func:`all_texts` opens every widget tab in turn, so hidden tabs are read too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.test_catalog_register import english_outside_parentheses, internal_values
from tests.test_rendered_korean import ALLOWED

#: The page's texts as (where, text) pairs. ``where`` names the cell (1-based, as the page
#: orders them) and the nearest ``lk-`` class around the text, so a finding points at the
#: widget that shows it.
COLLECT = r"""() => {
  const CODE = 'code, pre, script, style, .CodeMirror, .cm-editor';
  const out = [];
  const cells = [...document.querySelectorAll('.jp-Cell')];
  const where = (el) => {
    const cell = el.closest('.jp-Cell');
    const n = cell ? `cell ${cells.indexOf(cell) + 1}` : 'page';
    const kind = cell ? (cell.classList.contains('jp-MarkdownCell') ? ' (markdown)' : '') : '';
    const lkOf = (e) => [...(e.classList || [])].find((k) => k.startsWith('lk-'));
    let lk = '';
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (lkOf(e)) { lk = ' .' + lkOf(e); break; }
    }
    if (!lk && el === cell) {  // a cell's text: the first lesson widget in it
      const inner = cell.querySelector('[class*="lk-"]');
      if (inner) lk = ' .' + lkOf(inner);
    }
    return n + kind + lk;
  };
  // code is shown as code: hidden while the visible text is read, then put back
  const style = document.createElement('style');
  style.textContent = CODE.split(', ').map((s) => s + ' { visibility: hidden !important; }')
    .join('\n')
    // read on their own below: the charts' SVG text and the drop-downs' options
    + '\n.js-plotly-plot, select { visibility: hidden !important; }';
  document.head.appendChild(style);
  const inCells = new Set();
  for (const cell of cells) {
    for (const line of cell.innerText.split('\n')) {
      if (!line.trim()) continue;
      inCells.add(line.trim());
      out.push([where(cell), 'text', line.trim()]);
    }
  }
  // the page around the cells (voila's template, the course bar)
  for (const line of document.body.innerText.split('\n')) {
    if (line.trim() && !inCells.has(line.trim())) out.push(['page', 'text', line.trim()]);
  }
  style.remove();
  for (const el of document.querySelectorAll('[title], [aria-label], [placeholder], [alt]')) {
    if (el.closest(CODE) || !el.checkVisibility()) continue;
    for (const attr of ['title', 'aria-label', 'placeholder', 'alt']) {
      const v = el.getAttribute(attr);
      if (v !== null && v.trim()) out.push([where(el), attr, v.trim()]);
    }
  }
  for (const opt of document.querySelectorAll('select option')) {
    if (opt.textContent.trim()) out.push([where(opt), 'option', opt.textContent.trim()]);
  }
  for (const text of document.querySelectorAll('.js-plotly-plot svg text')) {
    if (text.textContent.trim()) out.push([where(text), 'chart', text.textContent.trim()]);
  }
  out.push(['page', 'tab title', document.title]);
  return out;
}"""


@dataclass(frozen=True)
class Finding:
    """One text a student should not see: where, what kind of text, the text, what is wrong."""

    where: str
    kind: str
    text: str
    problem: str

    def line(self) -> str:
        return f"{self.where} [{self.kind}] {self.problem} in {self.text[:100]!r}"


def page_texts(page: Any) -> list[tuple[str, str, str]]:
    """Every (where, kind, text) the page shows; see :data:`COLLECT`."""
    return [tuple(row) for row in page.evaluate(COLLECT)]


#: The tabs of the lesson widgets (ipywidgets' Tab, e.g. lesson 07's room designer).
WIDGET_TABS = ".jp-Cell .lm-TabBar-tab"


def all_texts(page: Any) -> list[tuple[str, str, str]]:
    """:func:`page_texts` with every widget tab opened in turn: a tab not selected is hidden,
    and a student reads it once they click it. The first tab is selected again at the end."""
    texts = page_texts(page)
    tabs = page.locator(WIDGET_TABS)
    n = tabs.count()
    for i in [*range(1, n), 0] if n > 1 else []:
        tabs.nth(i).click(timeout=10_000)
        page.wait_for_timeout(200)
        texts += page_texts(page)
    return texts


def findings(lesson: str, texts: list[tuple[str, str, str]]) -> list[Finding]:
    """English outside parentheses and internal values in ``texts``, minus ``lesson``'s
    allow list (``tests.test_rendered_korean.ALLOWED``); each text reported once."""
    allowed = ALLOWED.get(lesson, {})
    found: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for where, kind, text in texts:
        if (kind, text) in seen:
            continue
        seen.add((kind, text))
        if text.strip() == "null":
            found.append(Finding(where, kind, text, "'null'"))
            continue
        bad = [w for w in english_outside_parentheses(text) if w not in allowed]
        bad += [v for v in internal_values(text) if v.split(" (")[0] not in allowed]
        if bad:
            found.append(Finding(where, kind, text, ", ".join(bad)))
    return found


#: Every chart on the page has drawn (the notebook has run to its end: voila's streamed page
#: is loaded) and no widget is still waiting for its model.
ALL_DRAWN = """() => document.readyState === 'complete'
  && [...document.querySelectorAll('.js-plotly-plot')].every((g) => g.querySelector('.main-svg'))
  && !document.body.innerText.includes('Loading widget')"""


def assert_page_in_korean(page: Any, lesson: str, artifacts: Any, timeout_ms: int) -> None:
    """Read the whole page of ``lesson`` (its stem) once every chart has drawn and fail on any
    finding (written to ``artifacts/page_text_<lesson>.txt`` too); and the charts' mode bar is
    in Korean, without plotly's cloud-upload button (an English dialog)."""
    page.wait_for_function(ALL_DRAWN, timeout=timeout_ms)
    page.wait_for_timeout(500)  # the last outputs' widget views
    texts = all_texts(page)
    assert sum(kind == "chart" for _w, kind, _t in texts) > 0  # the charts' SVG text was read
    found = findings(lesson, texts)
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / f"page_text_{lesson}.txt").write_text(
        "".join(f.line() + "\n" for f in found), encoding="utf-8")
    assert not found, "\n".join(f.line() for f in found)
    assert page.locator('.modebar-btn[data-title="확대할 영역 고르기"]').count() > 0
    assert page.locator('.modebar-btn[data-title="차트 공유"]').count() == 0
