"""Lesson 09's decision app: controls -> chart and recommendation, the report, the tasks."""

from __future__ import annotations

import base64
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import labkit.ui as ui
from labkit.ui.capstone import report_html


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_HOME", str(tmp_path / "lk"))


@pytest.fixture(scope="module")
def app() -> Any:
    return ui.capstone.decision_app()


def _reset(app: Any) -> None:
    app.reset()


def test_chart_and_recommendation_follow_the_controls(app: Any) -> None:
    _reset(app)
    fig = app.chart.figure
    assert [round(y) for y in fig.data[0].y] == [round(app.result.costs_krw[k] / 1e4)
                                                 for k in ("buy", "rent", "api")]
    assert "클라우드 GPU 임대" in app.recommendation.value  # 19 % utilization: renting wins
    for key in ("class_frac", "after_school_frac", "vacation_frac", "always_on_frac"):
        app.fields[key].control.value = 100
    assert app.result.cheapest == "buy"
    assert "서버 구입" in app.recommendation.value.split("<br>")[1]
    assert app.chart.figure.data[0].marker.line.width[0] == 4  # the cheapest is outlined


def test_bad_input_beside_the_control(app: Any) -> None:
    _reset(app)
    good = app.result
    app.fields["students"].control.value = 0
    assert "⚠" in app.fields["students"].error.value
    assert app.result is good


def test_report_is_one_korean_page_with_sources(app: Any) -> None:
    _reset(app)
    page = report_html(app.result, today=date(2026, 12, 1))
    assert page.startswith("<!DOCTYPE html>") and 'lang="ko"' in page
    assert "행정실" in page and "2026-12-01" in page
    assert "KEPCO" in page or "한전" in page
    notes = re.findall(r"<li>", page.split("출처")[-1])
    assert len(notes) >= 8  # every figure's source, the tariff's and the models'
    # the 행정실 reads "수업용 가정", not the data files' "[A]" mark or the package's name
    sources = page.split("출처")[-1]
    assert "[A]" not in sources and "labkit" not in sources and "수업용 가정 — " in sources
    href = re.search(r'href="data:text/html;base64,([^"]+)"', app.report.value)
    assert href is not None
    assert "우리 학교 AI 서버 결정 보고서" in base64.b64decode(href.group(1)).decode("utf-8")
    assert 'download="우리학교_AI서버_결정.html"' in app.report.value


def test_a_figure_the_school_changed_is_cited_as_the_schools_own(app: Any) -> None:
    """Stop 20's trial: after the price was changed the footnote still cited the default's
    source (a DGX H100 estimate)."""
    import dataclasses

    _reset(app)
    defaults = re.findall(r"<li>([^<]*)</li>", report_html(app.result))
    default_note = next(n for n in defaults if n.startswith("서버 가격"))
    assert "우리 학교가 편집기에 넣은 값" not in default_note  # the default cites its source
    mine = dataclasses.replace(app.result,
                               case=dataclasses.replace(app.result.case,
                                                        server_price_usd=100_000.0))
    notes = re.findall(r"<li>([^<]*)</li>", report_html(mine))
    price = next(n for n in notes if n.startswith("서버 가격"))
    assert "우리 학교가 편집기에 넣은 값" in price and price != default_note
    fx = [n for n in notes if n.startswith("환율")]
    assert fx and fx == [n for n in defaults if n.startswith("환율")]  # unchanged: its source


def test_09_prediction_and_tasks(app: Any) -> None:
    _reset(app)
    p = ui.predict.ask(app, "09.cheapest")
    p.answer.value = "buy"
    assert p.commit()
    assert "서버 구입" in p.compare.value and "클라우드 GPU 임대" in p.compare.value
    box = ui.tasks.lesson("09", app)

    def check(n: int) -> str:
        box.children[n].children[1].click()
        return str(box.children[n].children[2].value)

    assert "✘" in check(0) and "✘" in check(1)
    app.fields["always_on_frac"].control.value = 100
    assert "✔" in check(0)
    _reset(app)
    app.fields["api_usd_per_m_tokens"].control.value = 0.3
    # API bill linear in the price: at 0.30 USD it is half of the 0.60 USD bill (79.7 M won
    # -> 39.9 M), under renting's 56.8 M
    assert app.result.cheapest == "api"
    assert "✔" in check(1)
    app.fields["students"].control.value = 20
    assert "초기값" in check(1)


def test_one_per_gpu_number_said_the_same_way_everywhere() -> None:
    """Issue 17: the card said "GPU 1장에 3.5명" where the recommendation rounded to 4."""
    from labkit.ui import school as ui_school

    # 28 students dealt onto 8 GPUs one by one: the busiest GPU holds 4 (brute force)
    load = [0] * 8
    for k in range(28):
        load[k % 8] += 1
    n = max(load)
    app = ui.capstone.decision_app()
    d = app.result
    assert d is not None
    said = f"GPU 1장에 최대 {n}명"
    card = ui_school.card("09").value
    report = ui.capstone.report_html(d)
    for where, text in (("card", card), ("recommendation", app.recommendation.value),
                        ("sharing table", app.sharing_table.value), ("report", report)):
        assert said in text, where
        assert "3.5명" not in text and "1장에 3.5" not in text, where
    # the sharing table says whose jobs it shows: the class on its GPUs, one GPU's share
    share = app.sharing_table.value
    assert "한 반 28명이 GPU 8장을 나눠 쓰면" in share and f"실습 작업 {n}개" in share
    assert f"{n}/{n}" in share
    assert "반 전체: GPU 8장에서 28명의 실습 작업이 모두 끝납니다." in share


def test_utilization_names_its_window_and_matches_lesson_01() -> None:
    """09's 19.3 % and 01's 17.4 % are the same year counted two ways; both are named."""
    import datetime as dt
    from pathlib import Path

    import yaml

    from labkit.ui import checks

    doc = yaml.safe_load((Path(__file__).parents[1] / "data" / "school" /
                          "calendar_2026.yaml").read_text(encoding="utf-8"))
    off = {str(h["date"]) for h in doc["holidays"]} | {str(c["date"]) for c in doc["closures"]}
    days = 0
    for term in doc["terms"]:
        day = dt.date.fromisoformat(str(term["start"]))
        while day <= dt.date.fromisoformat(str(term["end"])):
            days += day.weekday() < 5 and day.isoformat() not in off
            day += dt.timedelta(days=1)
    class_pct = 8 * days / 8_760 * 100  # 8 class hours a school day, of 2026's 8,760 h
    assert checks.class_share_pct() == pytest.approx(class_pct)  # lesson 01's figure
    app = ui.capstone.decision_app()
    assert app.result is not None
    assert app.result.class_share * 100 == pytest.approx(class_pct)
    rec = app.recommendation.value
    assert "1년(8,760시간) 전체로" in rec and f"1년의 {class_pct:.1f} %" in rec
    key = ui.capstone.key_numbers()
    assert key.row("수업 시간의 몫 (1년 8,760시간 중, 01 차시)")["값"] == f"{class_pct:.1f} %"
    assert "서버 가동률 (1년 8,760시간 전체)" in [cells[0] for cells in key.rows]


def test_the_page_follows_the_editor_before_a_save() -> None:
    """Issue 25's trial: 서버의 GPU 수 changed in 09's editor left the chart and the card as
    they were (they followed only 저장, while the editor said 저장 is for the other lessons)."""
    card = ui.school.card("09")
    editor = ui.school.editor()
    decision = ui.capstone.decision_app()
    before = list(decision.chart.figure.data[0].text)
    editor.fields["n_gpus"].control.value = 2
    assert decision.case.n_gpus == 2 and "GPU 2장" in card.value
    assert list(decision.chart.figure.data[0].text) != before
    assert "다른 차시에도" in editor.message.value  # not saved: the other lessons keep the file
    assert ui.school.current_case().case.n_gpus != 2
    editor.fields["n_gpus"].control.value = -1  # refused beside the control: nothing follows
    assert decision.case.n_gpus == 2


def test_the_report_downloads_from_a_button_named_for_it(app: Any) -> None:
    box = app.report.value
    pattern = r'<a download="[^"]+\.html"[^>]*role="button"[^>]*>보고서 내려받기 \(\d+ KB\)</a>'
    assert re.search(pattern, box), box[-200:]
