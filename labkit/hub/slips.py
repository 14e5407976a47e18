"""The login slips the teacher prints and hands out: one per student, ten to an A4 page.

``python -m labkit.hub roster slips OUT.html`` writes one self-contained HTML page (no script,
no file or font from elsewhere: it prints from any browser, offline): for each student with an
unused first-login code (:mod:`labkit.hub.passwords`), a slip with 이름 (display name), 아이디
(username), 첫 로그인 코드 (the code), the hub's address when known, and how to log in. The page
is laid out for A4 paper (210 x 297 mm, ISO 216) with CSS ``@page``: two columns of five slips
with dashed cutting lines, a slip never split across pages.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from labkit.hub.roster import Student
from labkit.i18n import t

__all__ = ["SLIPS_PER_PAGE", "slips_html"]

#: Slips on one A4 sheet: 2 columns x 5 rows of 95 x 52 mm under the title (277 mm printable).
SLIPS_PER_PAGE = 10

_STYLE = """
@page { size: A4 portrait; margin: 10mm; }
* { box-sizing: border-box; }
body { margin: 0; font-family: "Noto Sans CJK KR", "Nanum Gothic", "Malgun Gothic", sans-serif;
       color: #000; }
h1 { font-size: 13pt; margin: 0 0 4mm; }
.sheet { display: grid; grid-template-columns: 1fr 1fr; grid-auto-rows: 52mm; gap: 0;
         break-after: page; }
.sheet:last-child { break-after: auto; }
.slip { border: 1px dashed #777; padding: 4mm 5mm; break-inside: avoid; overflow: hidden; }
.slip dl { display: grid; grid-template-columns: max-content 1fr; gap: 1mm 3mm; margin: 0 0 2mm; }
.slip dt { font-weight: bold; }
.slip dd { margin: 0; }
.code { font-family: "DejaVu Sans Mono", Consolas, monospace; font-size: 15pt;
        letter-spacing: 1px; }
.how { font-size: 8pt; margin: 0; line-height: 1.35; }
"""


def _slip(student: Student, code: str, url: str) -> str:
    rows = [(t("hub.slips.name"), html.escape(student.display_name or student.username), ""),
            (t("hub.slips.username"), html.escape(student.username), ""),
            (t("hub.slips.code"), html.escape(code), ' class="code"')]
    if url:
        rows.append((t("hub.slips.where"), html.escape(url), ""))
    cells = "".join(f"<dt>{k}</dt><dd{attr}>{v}</dd>" for k, v, attr in rows)
    return f'<div class="slip"><dl>{cells}</dl><p class="how">{t("hub.slips.how")}</p></div>'


def slips_html(students: Sequence[Student], codes: Mapping[str, str], url: str = "") -> str:
    """Return the printable slips page for the ``students`` that have a code in ``codes``.

    Parameters
    ----------
    students : sequence of Student
        The roster, in its order (the slips follow it).
    codes : mapping of str to str
        Unused first-login codes by username (:meth:`labkit.hub.passwords.Accounts.codes`).
    url : str, optional
        The hub's address as students type it ("" leaves the line out).

    Returns
    -------
    str
        A whole HTML document (UTF-8, ``lang="ko"``), every value HTML-escaped.
    """
    slips = [_slip(s, codes[s.username], url) for s in students if s.username in codes]
    sheets = ["".join(slips[i:i + SLIPS_PER_PAGE])
              for i in range(0, len(slips), SLIPS_PER_PAGE)]
    body = "".join(f'<section class="sheet">{sheet}</section>' for sheet in sheets)
    title = html.escape(t("hub.slips.title"))
    return (f'<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8">'
            f"<title>{title}</title><style>{_STYLE}</style></head>"
            f"<body><h1>{title}</h1>{body}</body></html>\n")
