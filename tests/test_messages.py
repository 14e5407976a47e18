"""The UI catalog against its call sites, and the machinery for a second language.

The call sites are read from the source of every labkit module outside the catalog itself
with :mod:`ast`: every ``t("key", a=..., b=...)`` names a key of the catalog, and passes exactly
the placeholders that key's text uses (a missing one raises KeyError in a lesson; an extra one
is a value the text forgot to show). An f-string key (``t(f"goodput.loss.{name}")``) cannot be
resolved statically: at least one key must match it and take the placeholders passed.

Keys also travel in data before they reach ``t`` (``{"x": "lesson.key"}``, a tuple of keys, a
template's ``labkit_t("hub.error." ~ code)``), so every string constant of labkit/ that looks
like a key (a catalog prefix, a dot, key characters) must be a key or a prefix of keys; and
the reverse: every key of the catalog is used somewhere, literally, through a pattern or
prefix, or through :func:`labkit.i18n.error_text`'s ``<prefix>.<field>.<rule>`` lookup.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from labkit import i18n as messages
from labkit.validate import InputError

LABKIT = Path(messages.__file__).resolve().parents[1]
CATALOG_DIR = LABKIT / "i18n" / "ko"
TEMPLATE_SUFFIXES = (".html", ".j2")


def _callers() -> list[Path]:
    """Every labkit module that may call ``t`` (all but the catalog's own definitions)."""
    return [p for p in sorted(LABKIT.rglob("*.py")) if not p.is_relative_to(CATALOG_DIR)]


@dataclass(frozen=True)
class Call:
    """One ``t(...)`` call site: where, the key (or key pattern) and the keywords passed."""

    where: str
    keys: tuple[str, ...]  # literal keys (two for ``t("a" if x else "b")``)
    pattern: re.Pattern[str] | None  # an f-string key, as a regex over catalog keys
    passed: frozenset[str]
    open_ended: bool  # the call passes **values: only the named ones can be checked


def _pattern(node: ast.JoinedStr) -> re.Pattern[str]:
    parts = [re.escape(str(v.value)) if isinstance(v, ast.Constant) else r"[A-Za-z0-9_.-]+"
             for v in node.values]
    return re.compile("".join(parts))


def _names_t(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "t"
    return isinstance(func, ast.Attribute) and func.attr == "t"


def _calls() -> Iterator[Call]:
    for path in _callers():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args and _names_t(node.func)):
                continue
            arg = node.args[0]
            where = f"{path.relative_to(LABKIT.parent)}:{node.lineno}"
            passed = frozenset(kw.arg for kw in node.keywords if kw.arg)
            star = any(kw.arg is None for kw in node.keywords)
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield Call(where, (arg.value,), None, passed, star)
            elif isinstance(arg, ast.IfExp) and all(
                    isinstance(b, ast.Constant) for b in (arg.body, arg.orelse)):
                keys = (str(ast.literal_eval(arg.body)), str(ast.literal_eval(arg.orelse)))
                yield Call(where, keys, None, passed, star)
            elif isinstance(arg, ast.JoinedStr):
                yield Call(where, (), _pattern(arg), passed, star)
            # a key held in a variable: checked as a key-like constant (KeyUses below)


CALLS = list(_calls())


def _fields(text: str) -> set[str]:
    return {re.split(r"[.\[]", f)[0] for _, f, _, _ in string.Formatter().parse(text) if f}


def _placeholder_problem(call: Call, key: str, catalog: Mapping[str, str]) -> str | None:
    need = _fields(catalog[key])
    if call.open_ended:
        extra = call.passed - need
        return f"{call.where}: {key} does not use {sorted(extra)}" if extra else None
    if call.passed != need:
        return (f"{call.where}: {key} uses {sorted(need)}, the call passes "
                f"{sorted(call.passed)}")
    return None


def test_the_scan_finds_the_call_sites() -> None:
    """Guard against a scan that silently finds nothing (the tests below would pass)."""
    literal = [c for c in CALLS if c.keys]
    assert len(literal) > 500 and sum(c.pattern is not None for c in CALLS) > 30
    assert any(c.where.startswith("labkit/serve/") for c in CALLS)
    assert any(c.where.startswith("labkit/runtime/") for c in CALLS)
    assert any(c.keys == ("goodput.big",) and c.passed == {"pct"} for c in CALLS)


def test_every_key_used_exists() -> None:
    missing = [f"{c.where}: {k}" for c in CALLS for k in c.keys if k not in messages.KO]
    assert not missing, "keys used but not in the catalog:\n" + "\n".join(missing)


def test_every_call_passes_the_placeholders_its_text_uses() -> None:
    problems = [p for c in CALLS for k in c.keys if k in messages.KO
                if (p := _placeholder_problem(c, k, messages.KO))]
    assert not problems, "\n".join(problems)


def test_every_f_string_key_matches_a_key_that_takes_its_placeholders() -> None:
    problems = []
    for call in (c for c in CALLS if c.pattern is not None):
        assert call.pattern is not None
        keys = [k for k in messages.KO if call.pattern.fullmatch(k)]
        if not keys:
            problems.append(f"{call.where}: no key matches {call.pattern.pattern}")
        elif all(_placeholder_problem(call, k, messages.KO) for k in keys):
            problems.append(f"{call.where}: no key matching {call.pattern.pattern} takes "
                            f"{sorted(call.passed)}")
    assert not problems, "\n".join(problems)


def test_placeholder_check_catches_a_mismatch() -> None:
    """The check above can fail: a call that forgets a placeholder, or passes an extra one."""
    catalog = {"x.greet": "{name} 님, {n}번째 방문입니다."}
    call = Call("here:1", ("x.greet",), None, frozenset({"name"}), open_ended=False)
    assert "uses ['n', 'name']" in str(_placeholder_problem(call, "x.greet", catalog))
    extra = Call("here:2", ("x.greet",), None, frozenset({"name", "n", "typo"}), True)
    assert "does not use ['typo']" in str(_placeholder_problem(extra, "x.greet", catalog))
    ok = Call("here:3", ("x.greet",), None, frozenset({"name", "n"}), open_ended=False)
    assert _placeholder_problem(ok, "x.greet", catalog) is None


# -- keys outside t(): in dicts, tuples, templates; and every key used somewhere -------------

#: Strings that look like keys and are not: ``path`` -> what they are.
NOT_KEYS: dict[str, str] = {
    "mig.mode.current": "an nvidia-smi --query-gpu field (labkit/data/observe/smi_csv.py)",
    "mig.mode.pending": "an nvidia-smi --query-gpu field (labkit/data/observe/smi_csv.py)",
    "school.yaml": "the saved case's file name (labkit/data/school.py)",
    "error.html": "the JupyterHub template labkit's 404 page extends (labkit/hub/templates)",
    "econ.ex05": "a key-name prefix of lesson 05's exercises (econ.ex05_N; labkit/hub/results.py)",
    "econ.ex06": "a key-name prefix of lesson 06's exercises (econ.ex06_N; labkit/hub/results.py)",
}


def _rules() -> set[str]:
    """The validation rules :class:`InputError` documents (``error_text`` looks them up)."""
    doc = InputError.__doc__ or ""
    return set(re.findall(r'"(\w+)"', doc.split("rule : str")[1].split("value")[0]))


@dataclass
class KeyUses:
    """What a body of source says about catalog keys."""

    looks_like: re.Pattern[str]  # a catalog prefix, a dot, key characters
    strings: dict[str, str]  # key-like constant -> where
    patterns: dict[str, re.Pattern[str]]  # where -> an f-string or format key as a regex
    error_prefixes: set[str]  # error_text(..., prefix="goodput"): <prefix>.<field>.<rule>

    def prefix_of(self, text: str, catalog: Mapping[str, str]) -> bool:
        """Whether ``text`` is a key prefix (``"goodput.loss."``, ``"orch.policy"``)."""
        head = text if text.endswith((".", "_")) else text + "."
        return any(k.startswith(head) for k in catalog)

    def used(self, key: str, catalog: Mapping[str, str], rules: set[str]) -> bool:
        """Whether ``key`` is used: literally, by a pattern or prefix, or by error_text."""
        if key in self.strings or any(p.fullmatch(key) for p in self.patterns.values()):
            return True
        if any(key.startswith(s if s.endswith((".", "_")) else s + ".")
               for s in self.strings if s not in catalog and self.prefix_of(s, catalog)):
            return True
        return key.rsplit(".", 1)[-1] in rules and any(
            key.startswith(p + ".") for p in self.error_prefixes)


def key_uses(sources: Mapping[str, str], templates: Mapping[str, str],
             catalog: Mapping[str, str]) -> KeyUses:
    """Collect the key-like strings of Python ``sources`` and Jinja ``templates`` (name -> text)."""
    heads = sorted({k.split(".")[0] for k in catalog})
    looks = re.compile(rf"(?:{'|'.join(map(re.escape, heads))})\.[A-Za-z0-9_.+-]*")
    uses = KeyUses(looks, {}, {}, set())
    for name, text in sources.items():
        tree = ast.parse(text)
        inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if id(node) in inner:  # an f-string's constant part: the f-string is the pattern
                continue
            where = f"{name}:{getattr(node, 'lineno', 0)}"
            if (isinstance(node, ast.JoinedStr) and node.values
                    and isinstance(node.values[0], ast.Constant)
                    and looks.match(str(node.values[0].value))):
                uses.patterns[where] = re.compile("".join(
                    re.escape(str(v.value)) if isinstance(v, ast.Constant) else ".+"
                    for v in node.values))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if "{" in node.value and looks.match(node.value):  # a str.format key
                    uses.patterns[where] = re.compile(
                        re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(node.value)))
                elif looks.fullmatch(node.value):
                    uses.strings.setdefault(node.value, where)
            elif isinstance(node, ast.keyword) and node.arg in ("prefix", "error_prefix"):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    uses.error_prefixes.add(node.value.value)
    for name, text in templates.items():
        for lineno, line in enumerate(text.splitlines(), 1):
            for quoted in re.findall(r"[\"']([^\"'{}]+)[\"']", line):
                if looks.fullmatch(quoted):
                    uses.strings.setdefault(quoted, f"{name}:{lineno}")
    return uses


def unknown_keys(uses: KeyUses, catalog: Mapping[str, str]) -> list[str]:
    """Key-like strings that are neither a key nor a prefix of keys, nor listed in NOT_KEYS."""
    bad = [f"{where}: {s!r}" for s, where in uses.strings.items()
           if s not in catalog and not uses.prefix_of(s, catalog) and s not in NOT_KEYS]
    bad += [f"{where}: no key matches {p.pattern}" for where, p in uses.patterns.items()
            if not any(p.fullmatch(k) for k in catalog)]
    return bad


def unused_keys(uses: KeyUses, catalog: Mapping[str, str], rules: set[str]) -> list[str]:
    """Keys of ``catalog`` that nothing uses."""
    return [k for k in catalog if not uses.used(k, catalog, rules)]


def _labkit_uses() -> KeyUses:
    sources = {p.relative_to(LABKIT.parent).as_posix(): p.read_text(encoding="utf-8")
               for p in _callers()}
    templates = {p.relative_to(LABKIT.parent).as_posix(): p.read_text(encoding="utf-8")
                 for p in sorted(LABKIT.rglob("*")) if p.suffix in TEMPLATE_SUFFIXES}
    return key_uses(sources, templates, messages.KO)


USES = _labkit_uses()


def test_every_key_like_string_is_a_key() -> None:
    bad = unknown_keys(USES, messages.KO)
    assert not bad, "strings that look like catalog keys but are not:\n" + "\n".join(bad)
    assert {"mig.ex1", "econ.ex05_1"} <= set(USES.strings), "the scan finds keys in data"
    stale = sorted(set(NOT_KEYS) - set(USES.strings))
    assert not stale, f"no longer in labkit: remove from NOT_KEYS: {stale}"


def test_every_catalog_key_is_used() -> None:
    unused = unused_keys(USES, messages.KO, _rules())
    assert not unused, "catalog keys nothing uses (remove them):\n" + "\n".join(unused)


TINY = {"x.title": "제목", "x.ex1.q": "질문", "x.pick.a": "가", "x.pick.b": "나",
        "x.rate.at_most": "{limit} 이하", "x.gone": "아무도 쓰지 않습니다"}


@pytest.mark.parametrize(("source", "template", "unknown", "unused"), [
    # a key held in a dict or a tuple before it reaches t()
    ('LABELS = {"a": "x.title", "b": "x.titel"}\n', "", ["m.py:1: 'x.titel'"], None),
    ('KEYS = ("x.title", "x.nope")\n', "", ["m.py:1: 'x.nope'"], None),
    # an f-string or format key that matches nothing
    ('k = f"x.pick.{c}"\nj = f"x.pik.{c}"\n', "", ["m.py:2: no key matches x\\.pik\\..+"],
     None),
    ('{% x %}{{ labkit_t("x.titel") }}\n', None, None, None),
    # every key used: literally, by pattern, by prefix, by error_text's rule lookup, in a
    # template; "x.gone" is not
    ('a = ("x.title", f"x.pick.{c}", "x.ex1")\nerror_text(e, prefix="x")\n', "", [],
     ["x.gone"]),
    ('a = ("x.title", "x.pick.", "x.ex1")\nerror_text(e, prefix="x")\n',
     '{{ labkit_t("x.gone") }}\n', [], []),
])
def test_key_scan_on_a_tiny_catalog(source: str, template: str | None,
                                    unknown: list[str] | None, unused: list[str] | None) -> None:
    if template is None:  # the source is a template
        uses = key_uses({}, {"page.html": source}, TINY)
        assert unknown_keys(uses, TINY) == ["page.html:1: 'x.titel'"]
        return
    uses = key_uses({"m.py": source}, {"page.html": template}, TINY)
    assert unknown_keys(uses, TINY) == unknown
    if unused is not None:
        assert unused_keys(uses, TINY, {"at_most"}) == unused


def test_every_validation_rule_has_a_message() -> None:
    doc = InputError.__doc__ or ""
    rules = set(re.findall(r'"(\w+)"', doc.split("rule : str")[1].split("value")[0]))
    assert rules, "InputError docstring lists the rules"
    missing = sorted(rule for rule in rules if f"error.{rule}" not in messages.KO)
    assert not missing, missing


# -- a second language: the machinery, on a tiny test-only catalog --------------------------
def catalog_problems(reference: Mapping[str, str], other: Mapping[str, str]) -> list[str]:
    """What ``other`` lacks against ``reference``: keys, and placeholders per shared key."""
    problems = [f"missing key {k!r}" for k in reference if k not in other]
    problems += [f"unknown key {k!r}" for k in other if k not in reference]
    problems += [f"{k!r}: placeholders {sorted(_fields(other[k]))} != "
                 f"{sorted(_fields(reference[k]))}"
                 for k in reference if k in other and _fields(other[k]) != _fields(reference[k])]
    return problems


TINY_KO = {"x.title": "전력 {kw} kW", "x.ok": "확인", "x.count": "{n}개"}


@pytest.mark.parametrize(("other", "expected"), [
    ({"x.title": "Power {kw} kW", "x.ok": "OK", "x.count": "{n} items"}, []),
    ({"x.title": "Power {kw} kW", "x.count": "{n} items"}, ["missing key 'x.ok'"]),
    ({"x.title": "Power {watts} W", "x.ok": "OK", "x.count": "{n} items"},
     ["'x.title': placeholders ['watts'] != ['kw']"]),
    ({"x.title": "Power {kw} kW", "x.ok": "OK", "x.count": "{n}", "x.new": "New"},
     ["unknown key 'x.new'"]),
])
def test_catalog_problems_on_a_tiny_catalog(other: dict[str, str], expected: list[str]) -> None:
    assert catalog_problems(TINY_KO, other) == expected


@pytest.mark.parametrize("lang", sorted(set(messages.CATALOGS) - {messages.DEFAULT_LANGUAGE}))
def test_every_other_language_has_every_key_of_the_default(lang: str) -> None:
    """Runs once a second catalog exists in messages.CATALOGS (none yet: no cases).

    The message leads with what is wrong in the keys that exist (a placeholder that differs
    breaks ``t()`` at run time) and counts the missing ones, so a new translator sees both."""
    problems = catalog_problems(messages.KO, messages.CATALOGS[lang])
    missing = [p for p in problems if p.startswith("missing key")]
    wrong = [p for p in problems if not p.startswith("missing key")]
    assert not problems, (
        f"catalog {lang!r}: {len(wrong)} wrong, {len(missing)} of {len(messages.KO)} keys "
        f"missing\n" + "\n".join(wrong[:20]) + ("\nfirst missing: " + ", ".join(missing[:5])
                                                 if missing else ""))


def test_t_uses_the_chosen_language_and_falls_back_to_korean(
        monkeypatch: pytest.MonkeyPatch) -> None:
    english = {"goodput.big": "Goodput is {pct}"}  # a partial test-only catalog
    monkeypatch.setitem(messages.CATALOGS, "en", english)
    monkeypatch.setenv("LABKIT_LANG", "en")
    assert messages.language() == "en"
    assert messages.t("goodput.big", pct="88.9 %") == "Goodput is 88.9 %"
    assert messages.t("common.reset") == "초기값으로"  # not translated yet: Korean
    monkeypatch.setenv("LABKIT_LANG", "tlh")  # no such catalog
    assert messages.language() == "ko"
    assert messages.t("goodput.big", pct="88.9 %") == "Goodput 88.9 %"


def test_t_rejects_an_unknown_key() -> None:
    with pytest.raises(KeyError, match="no.such.key"):
        messages.t("no.such.key")


def test_error_text_translates_rule_and_uses_specific_message() -> None:
    err = InputError("losses.rewind", "non_negative", -1, "losses.rewind must be >= 0, got -1")
    assert messages.error_text(err) == "0 이상이어야 합니다 (입력: -1)."
    over = InputError("losses.rewind", "at_most", 900, "too much", limit=720.0)
    assert "예약된 시간(720 h)" in messages.error_text(over, prefix="goodput")
    assert messages.error_text(ValueError("boom")) == "입력을 확인하세요: boom"


@pytest.mark.parametrize(("value", "shown"), [
    # 1경 or more (labkit.answers.MAX_MAGNITUDE) in words, never "1e+308" (issue 17)
    (1e308, "1경 이상"), (10**308, "1경 이상"), (-1e308, "−1경 이하"), (3, "3"), (-1.5, "-1.5"),
    (10**400, "1경 이상"), ("x" * 1000, "x" * 23 + "…"), (9e15, "9,000,000,000,000,000"),
    (-0.0, "0"),
])
def test_error_text_echoes_a_huge_input_short(value: object, shown: str) -> None:
    text = messages.error_text(InputError("n", "at_most", value, "too big", limit=200))
    assert text == f"200 이하여야 합니다 (입력: {shown})."
