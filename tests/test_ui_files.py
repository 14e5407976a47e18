"""labkit.ui.files: uploads are checked (count, size, type, encoding); exports stay client-side."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit.ui import files
from labkit.validate import InputError


def _upload(name: str = "gpu.csv", content: bytes | memoryview = b"a,b\n1,2\n") -> tuple:  # type: ignore[type-arg]
    return ({"name": name, "type": "text/csv", "size": len(content), "content": content},)


def test_read_upload_returns_name_and_bytes() -> None:
    upload = files.read_upload(_upload(content=memoryview(b"\xef\xbb\xbfa,b\n")))
    assert upload == files.Upload("gpu.csv", b"\xef\xbb\xbfa,b\n")
    assert upload.text() == "a,b\n"


@pytest.mark.parametrize(("value", "field", "rule", "korean"), [
    ((), "files", "at_least", "하나 골라"),
    (_upload() * 2, "files", "at_most", "하나만"),
    (_upload(content=b"x" * (files.DEFAULT_MAX_UPLOAD_BYTES + 1)), "size", "at_most",
     "너무 큽니다: 2.0 MB (최대 2.0 MB)"),
    (_upload(name="gpu.xlsx"), "suffix", "choice", "gpu.xlsx"),
    ("gpu.csv", "files", "other", "읽지 못했습니다"),
    (({"name": "a.csv", "content": "text"},), "files", "other", "str"),
    ([b"raw"], "files", "other", "bytes"),
])
def test_read_upload_rejects_with_a_korean_message(value: object, field: str, rule: str,
                                                   korean: str) -> None:
    with pytest.raises(InputError) as err:
        files.read_upload(value)
    assert (err.value.field, err.value.rule) == (field, rule)
    assert korean in files.upload_error_text(err.value)


def test_read_upload_never_keeps_a_path_from_the_browser() -> None:
    assert files.read_upload(_upload(name="../../etc/passwd.csv")).name == "passwd.csv"
    assert files.read_upload(_upload(name="C.CSV"), suffixes=(".csv",)).name == "C.CSV"


def test_upload_text_rejects_non_utf8() -> None:
    with pytest.raises(InputError) as err:
        files.read_upload(_upload(content=b"\xff\xfe\x00")).text()
    assert err.value.field == "encoding"
    assert "UTF-8" in files.upload_error_text(err.value)


@given(st.binary(max_size=4096), st.integers(min_value=0, max_value=4096))
def test_read_upload_accepts_exactly_up_to_the_limit(content: bytes, limit: int) -> None:
    if len(content) <= limit:
        assert files.read_upload(_upload(content=content), max_bytes=limit).data == content
    else:
        with pytest.raises(InputError):
            files.read_upload(_upload(content=content), max_bytes=limit)


def test_file_upload_widget_accepts_one_csv() -> None:
    widget = files.file_upload("lk-observe-upload")
    assert widget.accept == ".csv" and widget.multiple is False
    assert "lk-observe-upload" in widget._dom_classes


def test_download_link_embeds_bytes_and_escapes_the_name() -> None:
    link = files.download_link('bill "2026".csv', "월,금액\n".encode())
    assert "lk-download" in link._dom_classes
    assert 'download="bill &quot;2026&quot;.csv"' in link.value
    payload = link.value.split("base64,")[1].split('"')[0]
    assert base64.b64decode(payload).decode() == "월,금액\n"
    assert "내려받기" in link.value
    with pytest.raises(InputError, match="too large"):
        files.download_link("big.csv", b"x" * (files.MAX_DOWNLOAD_BYTES + 1))
