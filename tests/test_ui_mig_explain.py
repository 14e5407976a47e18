"""The Korean sentence for each MIG placement rule (labkit.ui.mig_explain over PlacementCheck).

Which rule a placement breaks is the model's (``Layout.check``; the rules are checked against a
brute-force oracle in tests/test_mig_oracle.py); here: that each rule's sentence names what the
student needs (the units in the way and who holds them, the cap, the slices left, the starts).
"""

from __future__ import annotations

import pytest

from labkit.mig import Layout
from labkit.ui.mig_explain import explain


@pytest.mark.parametrize(("model", "placed", "profile", "start", "rule", "words"), [
    ("A100-40GB", [("1g.5gb", None), ("1g.5gb", None), ("2g.10gb", None)], "3g.20gb", None,
     "no_free_placement", ["0, 4", "모두 막혔습니다", "1g.5gb@4", "2g.10gb@0"]),
    ("H100-80GB", [("2g.20gb", 4)], "3g.40gb", 4, "overlap",
     ["유닛 4–7", "유닛 4, 5", "2g.20gb@4", "지금 놓을 수 있는 시작 위치: 0"]),
    ("H100-80GB", [], "3g.40gb", 2, "invalid_placement",
     ["메모리 유닛 2에서 시작할 수 없습니다", "0, 4뿐"]),
    ("H100-80GB", [("1g.10gb+me", 0)], "1g.10gb+me", 1, "profile_cap", ["최대 1개", "미디어 엔진"]),
    ("H100-80GB", [("3g.40gb", 0), ("3g.40gb", 4)], "3g.40gb", None, "profile_cap",
     ["최대 2개", "이미 2개"]),
    ("H100-80GB", [("3g.40gb", 4)] + [("1g.10gb", s) for s in range(4)], "1g.10gb", None,
     "compute_slices", ["0개 남았는데", "1개가"]),
    ("RTX-PRO-6000", [("1g.24gb+me.all", 0)], "1g.24gb", None, "media_engines",
     ["1g.24gb+me.all@0", "-me 프로필만"]),
    ("RTX-PRO-6000", [("1g.24gb", 0)], "2g.48gb+me.all", None, "media_engines",
     ["1g.24gb@0", "모두 가져가는"]),
    ("A30", [], "1g.10gb", None, "unknown_profile", ["A30", "1g.6gb", "4g.24gb"]),
    ("H100-80GB", [], "3g.40gb", None, None, ["유닛 4에 놓습니다"]),
    ("H100-80GB", [], "3g.40gb", 0, None, ["메모리 유닛 0에 놓을 수 있습니다"]),
])
def test_each_rule_is_worded_with_what_is_in_the_way(
        model: str, placed: list[tuple[str, int | None]], profile: str, start: int | None,
        rule: str | None, words: list[str]) -> None:
    lay = Layout(model, placed)
    assert lay.check(profile, start).rule == rule
    text = explain(lay, profile, start)
    for word in words:
        assert word in text, (word, text)


def test_a_plain_profile_cap_does_not_mention_media_engines() -> None:
    lay = Layout("H100-80GB", [("3g.40gb", 0), ("3g.40gb", 4)])
    assert "미디어" not in explain(lay, "3g.40gb")


@pytest.mark.parametrize("bad", [7, 99, -1, 2.5, True, "x"])
def test_a_bad_start_is_explained_not_raised(bad: object) -> None:
    lay = Layout("H100-80GB")
    assert not lay.can_place("1g.10gb", bad)
    assert "1g.10gb" in explain(lay, "1g.10gb", bad)
