"""Lesson 03's waterfall: each bar's hover gives that bar's hours (issue 25's second trial read
plotly's running total on the 8 h maintenance bar, "계획 정비 712 h", as the loss itself)."""

from __future__ import annotations

from labkit.ui.goodput import waterfall_figure, worksheet_app


def test_each_loss_bar_hovers_its_own_hours_and_what_is_left() -> None:
    app = worksheet_app()
    assert app.result is not None
    trace = waterfall_figure(app.result).data[0]
    # the seed ledger of lesson 03 (data/goodput): 720 h reserved, losses 8, 22, 6, 14, 30 h
    losses = [8, 22, 6, 14, 30]
    left = [720 - sum(losses[:i + 1]) for i in range(len(losses))]  # 712, 690, 684, 670, 640
    assert list(trace.customdata) == (
        ["예약된 시간 720 h"]
        + [f"잃은 시간 {h} h (남은 시간 {r} h)" for h, r in zip(losses, left, strict=True)]
        + ["유효 학습 시간 640 h"])
    assert trace.hovertemplate == "%{x}<br>%{customdata}<extra></extra>"
