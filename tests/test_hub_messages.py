"""Every catalog key that labkit.hub uses exists (tests/test_messages.py covers labkit/ui)."""

from __future__ import annotations

import re
from pathlib import Path

from labkit import i18n as messages

HUB_DIR = Path(__file__).resolve().parents[1] / "labkit" / "hub"
KEY_CALL = re.compile(r"""\bt\(\s*["']([a-z0-9_.]+)["']""")
PREFIX_CALL = re.compile(r"""\bt\(\s*f["']([a-z0-9_.]+)\.\{""")


def test_every_key_used_in_labkit_hub_exists() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(HUB_DIR.rglob("*.py")))
    used = set(KEY_CALL.findall(text))
    assert "hub.share.no_slice" in used  # the pattern finds the calls
    missing = sorted(k for k in used if k not in messages.KO)
    assert not missing, f"keys used in labkit/hub but not in the catalog: {missing}"
    for prefix in set(PREFIX_CALL.findall(text)):
        assert any(k.startswith(prefix + ".") for k in messages.KO), prefix
