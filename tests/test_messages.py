"""The UI catalog: every literal key used in labkit/ui exists; languages agree."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from labkit.ui import messages
from labkit.validate import InputError

UI_DIR = Path(messages.__file__).parent
KEY_CALL = re.compile(r"""\bt\(\s*["']([a-z0-9_.]+)["']""")
PREFIX_CALL = re.compile(r"""\bt\(\s*f["']([a-z0-9_.]+)\.\{""")


def _used(pattern: re.Pattern[str]) -> set[str]:
    found: set[str] = set()
    for path in UI_DIR.rglob("*.py"):
        found |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_literal_key_exists() -> None:
    missing = sorted(k for k in _used(KEY_CALL) if k not in messages.KO)
    assert not missing, f"keys used but not in the catalog: {missing}"


def test_every_dynamic_prefix_has_keys() -> None:
    prefixes = _used(PREFIX_CALL)
    assert prefixes, "expected f-string keys such as goodput.loss.{name}"
    for prefix in prefixes:
        assert any(k.startswith(prefix + ".") for k in messages.KO), prefix


def test_every_validation_rule_has_a_message() -> None:
    rules = set(re.findall(r'"(\w+)"', InputError.__doc__.split("rule : str")[1].split("value")[0]))
    assert rules, "InputError docstring lists the rules"
    for rule in rules:
        assert f"error.{rule}" in messages.KO, rule


@pytest.mark.parametrize("lang", sorted(messages.CATALOGS))
def test_catalogs_share_keys_and_placeholders(lang: str) -> None:
    catalog = messages.CATALOGS[lang]
    assert set(catalog) == set(messages.KO)
    for key, text in catalog.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
        ko_fields = {f for _, f, _, _ in string.Formatter().parse(messages.KO[key]) if f}
        assert fields == ko_fields, key


def test_t_formats_and_rejects_unknown_key() -> None:
    assert messages.t("goodput.big", pct="88.9 %") == "Goodput 88.9 %"
    with pytest.raises(KeyError):
        messages.t("no.such.key")


def test_error_text_translates_rule_and_uses_specific_message() -> None:
    err = InputError("losses.rewind", "non_negative", -1, "losses.rewind must be >= 0, got -1")
    assert messages.error_text(err) == "0 이상이어야 합니다 (입력: -1)."
    over = InputError("losses.rewind", "at_most", 900, "too much", limit=720.0)
    assert "예약된 시간(720 h)" in messages.error_text(over, prefix="goodput")
    assert messages.error_text(ValueError("boom")) == "입력을 확인하세요: boom"


@pytest.mark.parametrize(("value", "shown"), [
    (1e308, "1e+308"), (10**308, "1e+308"), (3, "3"), (-1.5, "-1.5"),
    (10**400, "1" + "0" * 22 + "…"), ("x" * 1000, "x" * 23 + "…"),
])
def test_error_text_echoes_a_huge_input_short(value: object, shown: str) -> None:
    text = messages.error_text(InputError("n", "at_most", value, "too big", limit=200))
    assert text == f"200 이하여야 합니다 (입력: {shown})."
