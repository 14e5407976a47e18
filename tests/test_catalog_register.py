"""Every catalog string in the course's one register, 합니다체, and in Korean.

Rules (labkit/i18n/ko/__init__.py states the register):

- 합니다체 statements end in ``-ㅂ니다/-습니다`` (…니다.), questions in ``-ㅂ니까/-습니까`` (…까?),
  requests in ``-(으)세요`` / ``-(으)십시오``. A sentence that ends in 다 not preceded by 니
  (짧아진다, 다르다, 했다) is 해라체; a question that does not end in 까 (같은가?, 걸까요?) is
  해라체 or 해요체. A sentence ends at ., !, ?, a line break, ``<br>`` or the end of the string.
- English outside parentheses only as the course's technical vocabulary (acronyms, model and
  tool names, metric names: :data:`TERMS`); no internal values (snake_case identifiers, None,
  nan, null, True/False, NVML's blank sentinels, file names) anywhere a student reads.

Command lines and configuration a teacher or operator types are code, not prose: a command,
option, path or field name inside a string is marked as code (between backticks in a terminal
line, ``<code>`` in HTML, the way the page shows it; :data:`CODE_SPAN`) and the prose rules skip
it; a key that is code as a whole is listed in :data:`CODE_KEYS` with the reason.
"""

from __future__ import annotations

import re

import pytest

from labkit.i18n.ko import KO

#: Sentence-final 다 not after 니 (합니다체 ends in 니다).
HAERACHE = re.compile(r"(?<!니)다(?=\s*(?:[.!…]|$|<br|\n))")
#: A question mark not after 까 (합니다체 questions end in 니까).
QUESTION = re.compile(r"(?<!까)\s*\?")
#: Where a unit of text ends in a table, a list or a heading as well as in a sentence: a
#: sentence mark, a line end, a ``<br>``, a table's cell border ``|``.
UNIT_END = re.compile(r"[.!?…]+|<br\s*/?>|\n|\|")
#: Markup and closing marks after a unit's last word (``**…다**``, ``"…다"``).
TRAILING = re.compile(r"[\s*_`\"'”’)\]>]+$")
#: Question words: a unit that opens with one and ends in 나 is a 해라체 question
#: ("왜 GPU를 나눠 쓰나"); without one, 나 is a word ("프로젝트 하나").
QUESTION_WORD = re.compile(
    r"(?:^|\s|\d\.\s*)(?:왜|무엇|뭘|어떻게|어떤|얼마|어디|누가|누구|언제|몇)")


def _hamnida(word: str, endings: tuple[str, ...]) -> bool:
    """``word`` ends in one of ``endings`` after a syllable closed by ㅂ (합니다, 입니까, 봅시다,
    습니다), not after an open one (아니다, 하니까)."""
    for ending in endings:
        if word.endswith(ending) and len(word) > len(ending):
            before = ord(word[-len(ending) - 1]) - 0xAC00
            if 0 <= before < 11172 and before % 28 == 17:  # final consonant ㅂ
                return True
    return False


def register_slips(text: str) -> list[str]:
    """Units of ``text`` (sentences, headings, table cells, list items) not in 합니다체.

    A unit ends at a sentence mark, a line end, ``<br>`` or a table's ``|``. It slips when its
    last word ends in 다 not after 니 or 시 (짧아진다, 이다, 있다; 합니다체 ends in …니다 and
    proposes in …ㅂ시다), in 는가/은가/인가 or 까 not after 니 (쓸까, 걸까요: 해라체 and 해요체
    questions), in 나 with a question word before it (왜 … 쓰나), or in a question mark not
    after 니까 (돌린다면?). A quotation followed by a particle (``"…빠르다"는``) is reported
    speech, not a unit end, and is skipped.
    """
    text = re.sub(r"[\"“'‘][^\"”'’\n]*[\"”'’](?=[가-힣])", " 인용 ", text)
    slips = []
    pos = 0
    for end in [*UNIT_END.finditer(text), None]:
        stop = end.start() if end else len(text)
        mark = end.group(0) if end else ""
        unit = TRAILING.sub("", text[pos:stop])
        pos = end.end() if end else len(text)
        if not unit.strip():
            continue
        last = unit.split()[-1] if unit.split() else ""
        slip = ((last.endswith("다") and not _hamnida(last, ("니다", "시다"))
                 and not last.endswith(("마다", "보다")))  # the particles 마다, 보다
                or re.search(r"[는은인]가$", last)
                or (last.endswith(("까", "까요")) and not _hamnida(last, ("니까",)))
                or (last.endswith("나") and QUESTION_WORD.search(unit))
                or ("?" in mark and not _hamnida(last, ("니까",))))
        if slip:
            slips.append(unit.strip()[-30:] + mark.strip())
    return slips
#: Keys whose 다/? is not a sentence ending in another register (reason each).
REGISTER_ALLOWED = {
    "observe.summary.busy": "a noun-form label, '바쁘지만 일하지 않음?'",
}

#: The course's technical vocabulary that may stand outside parentheses (after the lesson
#: introduced it): tools, products, people and organisations, metric and command names.
TERMS = {
    "goodput", "badput", "Goodput",
    "nvidia-smi", "util.gpu", "util.memory", "dcgm-exporter", "mig-parted", "nvidia-mig-parted",
    "query-gpu", "dmon", "sudo", "voila", "JupyterLab", "Prometheus", "Grafana", "Slurm",
    "PowerShell", "labkit",
    "NVIDIA", "Llama", "Meta", "Lenovo", "MLPerf", "Epoch", "Xid", "Young", "Daly",
    "StepFun", "InfiniteHBD",  # the fault trace's publisher and name (lesson 04)
    "TensorRT-LLM", "vLLM",  # LLM serving software MLPerf systems run (lesson 06's labels)
    "me",  # the MIG profile suffix "+me" / "-me" (media extensions)
    "exp",  # the exponential function in a formula
    "kWh", "kW", "GiB", "MiB", "Hz",  # throughput is "토큰/초" (tokens/s only in parentheses)
    # SI unit symbols (not words): what NVML and nvidia-smi report in
    "MHz", "kJ", "mJ", "mW", "ms", "MB/s", "KB/s", "B/s",
    "PCIe", "QoS",  # acronyms in their own mixed case
    "SwPowerCap",  # NVML's clock-event reason, as nvidia-smi -q prints it
    "n/a",  # the house's mark for a value NVML cannot give (shown with the reason)
    # proper names the lessons' prose and reference lists write outside parentheses
    "Shift+Enter",  # the key a student presses
    "J/s",  # an SI unit (1 W = 1 J/s)
    "Hopper",  # NVIDIA's GPU architecture
    "nvitop", "gpustat", "jupyterlab-nvdashboard", "CuPy",  # tools whose issues 01 cites
    "Google", "Microsoft", "Alibaba", "ByteDance", "SchedMD", "MLCommons", "SemiAnalysis",
    "Uptime", "Institute", "The", "Green", "Grid",  # "Uptime Institute", "The Green Grid"
    "Kueue",  # Kubernetes' job queueing (08)
}
#: Keys that hold a command, a URL, a file or a setting the teacher/operator types (code).
CODE_KEYS = {
    "hub.plan.apply": "the mig-parted command the teacher runs",
    "mig.import.placeholder": "an example mig-parted file, as typed",
    "mig.import.title": "names the nvidia-smi mig -cgi command",
    "observe.log_error.encoding": "the PowerShell command that re-saves a log as UTF-8",
    "observe.live.error.bad_url": "URL schemes and an example address",
    "observe.live.error.bad_window": "Prometheus duration syntax (15s, 1m)",
    "hub.share.no_slice": "the hub's GPU policy value the teacher sets ('shared')",
    "hub.share.no_gpu": "the hub's GPU policy values the teacher sets ('auto', 'shared')",
    "hub.k8s.error": "values.yaml: the Helm file the operator edits",
    "observe.replay.format.nvidia-smi-q": "the nvidia-smi -q command",
    "observe.replay.format.nvidia-smi-q-xml": "the nvidia-smi -q -x command",
    "observe.log_error.xml": "the nvidia-smi -q -x command",
    "observe.log_error.layout": "the nvidia-smi and dcgm-exporter commands to re-run",
    "observe.replay.field_set_label": "the --query-gpu option",
    "observe.log_error.no_header": "the --query-gpu option",
    "mig.live.allowed": "the environment variable the teacher sets",
    "mig.live.why.disabled": "the environment variable the teacher sets",
    "common.banner.reason.BadSpec": "the environment variable LABKIT_GPU",
    "common.banner.missing": "the environment variable LABKIT_GPU",
    "observe.replay.field_set.nvidia_logging": "nvidia-smi --query-gpu field names",
    "observe.replay.format.prometheus": "Prometheus' query_range API, the format's name",
}
INTERNAL = [
    (re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b"), "snake_case identifier"),
    (re.compile(r"\b(?:None|nan|NaN|null|True|False|undefined)\b"), "Python/JS value"),
    (re.compile(r"\d{16,}"), "raw sentinel"),
    (re.compile(r"[\w-]+\.(?:py|csv|ya?ml|json|ipynb|toml|txt)(?![A-Za-z])"), "file name"),
]
#: Text marked as code: a command, option, file or field name the reader types or finds in a file,
#: shown as typed (between backticks in a terminal line, ``<code>`` in HTML; the rendered-page
#: test skips ``<code>``/``<pre>`` the same way). Only the marked span is skipped, never the key.
CODE_SPAN = re.compile(r"`[^`\n]+`|<code>.*?</code>", re.S)
WORD = re.compile(r"(?<![-\w/.])[A-Za-z][A-Za-z0-9]*(?:[.\-/+@][A-Za-z0-9]+)*")


def _prose(text: str) -> str:
    """The text a student reads: no code, tags, entities, placeholders or parenthesized asides."""
    text = CODE_SPAN.sub(" ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"&[a-z]+;|&#\d+;", " ", text)
    text = re.sub(r"\{[^{}]*\}", " X ", text)
    out, depth = [], 0
    for ch in text:
        if ch in "(（":
            depth += 1
        elif ch in ")）":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def english_outside_parentheses(text: str) -> list[str]:
    """English words outside parentheses that are not the course's technical vocabulary."""
    found = []
    for m in WORD.finditer(_prose(text)):
        word = m.group(0)
        if word in TERMS or word.isupper() or len(word) == 1 or any(c.isdigit() for c in word):
            continue  # acronyms (GPU, SM), variables (S, u), models and versions (H100, v5.0)
        found.append(word)
    return found


def internal_values(text: str) -> list[str]:
    plain = re.sub(r"\{[^{}]*\}", " ", re.sub(r"<[^>]+>", " ", CODE_SPAN.sub(" ", text)))
    return [f"{m.group(0)} ({why})" for pattern, why in INTERNAL for m in pattern.finditer(plain)]


def test_the_register_is_written_in_the_catalog_header() -> None:
    import labkit.i18n.ko as ko

    assert "합니다체" in (ko.__doc__ or "")


def test_every_catalog_string_is_in_hamnida_style() -> None:
    wrong = {}
    for key, text in KO.items():
        if key in REGISTER_ALLOWED:
            continue
        plain = _prose(text) if "(" in text else re.sub(r"<[^>]+>", " ", text)
        hits = [plain[max(0, m.start() - 10):m.end()] for m in HAERACHE.finditer(plain)]
        hits += [plain[max(0, m.start() - 10):m.end()] for m in QUESTION.finditer(plain)]
        if hits:
            wrong[key] = hits
    assert not wrong, wrong


def test_no_english_words_outside_parentheses_in_the_catalog() -> None:
    wrong = {key: words for key, text in KO.items() if key not in CODE_KEYS
             and (words := english_outside_parentheses(text))}
    assert not wrong, wrong


def test_no_internal_values_in_the_catalog() -> None:
    wrong = {key: found for key, text in KO.items() if key not in CODE_KEYS
             and (found := internal_values(text))}
    assert not wrong, wrong


@pytest.mark.parametrize(("text", "register_ok"), [
    ("간격은 짧아진다", False), ("방법이 다르다.", False), ("작업을 했다<br>다음", False),
    ("간격이 짧아집니다.", True), ("같은 모델입니까?", True), ("무엇을 걸까요?", False),
    ("같은가? (기준선)", False), ("줄이세요.", True), ("바다", False),
])
def test_the_register_rule_tells_the_styles_apart(text: str, register_ok: bool) -> None:
    found = HAERACHE.search(text) or QUESTION.search(_prose(text))
    assert (found is None) == register_ok


@pytest.mark.parametrize(("text", "english"), [
    ("closed 부문입니다", ["closed"]), ("클로즈드 부문(closed division)입니다", []),
    ("GPU 3장과 SM 활동", []), ("H100-80GB의 3g.40gb", []), ("goodput이 오릅니다", []),
    ("constructed by labkit", ["constructed", "by"]), ("<b>{value}</b> Offline", ["Offline"]),
    ("nvidia-smi -q -x로 뽑습니다", []),
    ("`head -n 10 log.csv`로 자릅니다", []), ("<code>ui.school.editor()</code>로 엽니다", []),
    ("`head` 뒤의 head 명령", ["head"]),  # only the marked span is code
])
def test_the_english_rule_finds_words_outside_parentheses(text: str, english: list[str]) -> None:
    assert english_outside_parentheses(text) == english


@pytest.mark.parametrize(("text", "n"), [
    ("gpu_util 값", 1), ("값: None", 1), ("nan h", 1), ("9223372036854775792", 1),
    ("worksheet.yaml을 읽습니다", 1), ("{busy_frac} 입니다", 0), ("3g.40gb", 0),
    ("`import class.csv`로 가져옵니다", 0), ("`a` class.csv", 1),
])
def test_the_internal_value_rule(text: str, n: int) -> None:
    assert len(internal_values(text)) == n


@pytest.mark.parametrize(("text", "slips"), [
    ("## 3. util.gpu는 무엇을 재는가", 1), ("## 1. 왜 GPU를 나눠 쓰나", 1),
    ("## 4. 도전: 학생 일곱 명과 프로젝트 하나", 0), ("| 비율 | 필수 | %를 오간다 |", 1),
    ("| 비율 | 필수 | %를 오갑니다 |", 0), ("- 계산은 모두 앱이 한다\n- 다음 줄입니다.", 1),
    ("## 4. 바쁘다고 값진 것은 아니다", 1), ("**여기가 끝이다**", 1), ("봅시다.", 0),
    ('"새 칩이 4배 빠르다"는 말을 들으면 묻습니다.', 0), ("## 6. 수업 시간에만 돌린다면?", 1),
    ("## 7. 벽에 무엇을 걸까", 1), ("무엇을 걸까요?", 1), ("같은 모델입니까?", 0),
    ("이 값은 무엇입니까?", 0), ("GPU 사용률이다.", 1), ("2 × 8장 있다", 1),
    ("util.gpu는 좋은 선택이 아니다.", 1), ("비트 수가 절반이 될 때마다", 0), ("합시다", 0),
])
def test_the_unit_register_rule_reads_headings_cells_and_items(text: str, slips: int) -> None:
    assert len(register_slips(text)) == slips, register_slips(text)


def test_every_catalog_string_ends_its_headings_cells_and_items_in_hamnida_style() -> None:
    wrong = {}
    for key, text in KO.items():
        if key in REGISTER_ALLOWED or key in CODE_KEYS:
            continue
        plain = CODE_SPAN.sub(" ", re.sub(r"<(?!br)[^>]+>", " ", text))
        if slips := register_slips(re.sub(r"\{[^{}]*\}", "X", plain)):
            wrong[key] = slips
    assert not wrong, wrong
