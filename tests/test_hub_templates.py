"""labkit/hub/templates: every JupyterHub page a student or teacher meets, rendered in Korean.

Rendered with JupyterHub's own template loader (``JupyterHub.init_tornado_settings``: the
``templates/`` prefix reaches JupyterHub's originals, labkit's folder comes first) over
JupyterHub's installed templates, so a block labkit overrides that JupyterHub renamed, or a
catalog key that is missing, fails here. The live pages are checked in chromium by
tests/hub/test_hub_browser.py.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

jinja2 = pytest.importorskip("jinja2")
pytest.importorskip("jupyterhub")

from labkit.hub.config import TEMPLATES  # noqa: E402
from labkit.i18n import t  # noqa: E402

# UI words JupyterHub's English pages use (its templates and the text its JS writes)
ENGLISH = re.compile(r"\b(Home|Token|Admin|Services|Logout|Login|Start|Stop|My Server|Server|"
                     r"server|starting|redirected|Event log|Complete|refresh|Launch|Relaunch|"
                     r"running|Note|Permissions|Never|revoke|Request|Error|moons|logged out|"
                     r"Toggle|Options|Authorize|permission|Applies)\b")


def _env() -> Any:
    from jupyterhub.app import JupyterHub

    base = JupyterHub()._template_paths_default()[0]
    loader = jinja2.ChoiceLoader([
        jinja2.PrefixLoader({"templates": jinja2.FileSystemLoader([base])}, "/"),
        jinja2.FileSystemLoader([str(TEMPLATES), base]),
    ])
    return jinja2.Environment(loader=loader, autoescape=True)


def _context(**extra: Any) -> dict[str, Any]:
    user = SimpleNamespace(name="kim01", admin=False, json_escaped_name="kim01",
                           spawner=SimpleNamespace(options_form=None))
    base = {
        "static_url": lambda path, include_version=True: f"/hub/static/{path}",
        "base_url": "/hub/", "prefix": "/", "user": user, "parsed_scopes": set(),
        "services": [], "logout_url": "/hub/logout", "login_url": "/hub/login",
        "xsrf_token": "x", "xsrf": "x", "labkit_t": t, "labkit_min_password": 7,
        "progress_url": "/hub/api/users/kim01/server/progress", "url": "/hub/spawn/kim01",
        "spawn_url": "/hub/spawn/kim01", "default_server": SimpleNamespace(active=False),
        "authenticator_login_url": "/hub/login", "status_code": 404, "status_message": "Not Found",
    }
    return {**base, **extra}


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no scripts, styles, hidden dialog, tags or URLs."""
    html = re.sub(r"(?s)<(script|style|noscript)\b.*?</\1>", " ", html)
    html = re.sub(r'(?s)<div class="modal fade".*?</div>\s*</div>\s*</div>\s*</div>', " ", html)
    html = re.sub(r"(?s)<!--.*?-->", " ", html)
    html = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", html)


TOKEN = SimpleNamespace(api_id="a1", note="수업", scopes=["read:users"], created=dt.datetime(
    2026, 12, 1, 9), last_activity=None, expires_at=None)
PAGES: list[tuple[str, dict[str, Any], str]] = [
    ("login.html", {"user": None}, "hub.login.title"),
    ("first_login.html", {"user": None, "username": "kim01", "code": "ABCD-EFGH"},
     "hub.first_login.title"),
    ("home.html", {}, "hub.home.start"),
    ("home.html", {"default_server": SimpleNamespace(active=True)}, "hub.home.stop"),
    ("spawn.html", {"spawner_options_form": "", "error_message": "no slice"},
     "hub.spawn.heading"),
    ("spawn_pending.html", {}, "hub.pending.starting"),
    ("stop_pending.html", {}, "hub.stop_pending.stopping"),
    ("not_running.html", {"failed": False, "implicit_spawn_seconds": 0},
     "hub.not_running.heading"),
    ("not_running.html", {"failed": True, "failed_message": "남은 GPU 몫이 없습니다"},
     "hub.not_running.failed"),
    ("404.html", {}, "hub.error.404"),
    ("error.html", {"status_code": 403}, "hub.error.403"),
    ("logout.html", {"user": None}, "hub.logout.done"),
    ("token.html", {"user": SimpleNamespace(name="kim", admin=True, json_escaped_name="kim",
                                            spawner=None), "api_tokens": [TOKEN],
                    "oauth_clients": [{"token_id": "o1", "description": "class page",
                                       "tokens": [], "last_activity": None,
                                       "created": None}]}, "hub.token.heading"),
    ("oauth.html", {"oauth_client": SimpleNamespace(description="Server at /user/kim01/",
                                                    redirect_uri="/user/kim01/oauth_callback"),
                    "allowed_scopes": ["read:users:name!user=kim01"],
                    "scope_descriptions": [{"scope": None, "description": "Identify you",
                                            "filter": ""},
                                           {"scope": "access:servers", "description": "Access",
                                            "filter": "!user=kim01"}]}, "hub.oauth.heading"),
]


@pytest.mark.parametrize(("name", "extra", "key"), PAGES,
                         ids=[f"{p[0]}-{i}" for i, p in enumerate(PAGES)])
def test_page_renders_in_korean_without_english_ui_words(name: str, extra: dict[str, Any],
                                                         key: str) -> None:
    html = _env().get_template(name).render(**_context(**extra))
    text = visible_text(html)
    assert t(key).split("{")[0][:12] in text, text[:400]
    assert t("hub.page.title") in html  # the Korean frame (labkit's page.html) is used
    words = re.sub(r"\([^)]*\)", "", text)  # English terms in parentheses are the house style
    assert not ENGLISH.findall(words), (ENGLISH.findall(words), text[:600])


def test_labkit_overrides_the_student_facing_pages() -> None:
    names = {p.name for p in Path(TEMPLATES).glob("*.html")}
    assert {"page.html", "login.html", "error.html", "home.html", "spawn.html",
            "spawn_pending.html", "stop_pending.html", "not_running.html", "404.html",
            "token.html", "logout.html", "oauth.html"} <= names


def test_english_pattern_finds_jupyterhubs_own_pages() -> None:
    # the oracle: JupyterHub's untranslated pages fail the same check
    from jupyterhub.app import JupyterHub

    base = JupyterHub()._template_paths_default()[0]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([base]), autoescape=True)
    for name in ("home.html", "spawn_pending.html", "not_running.html"):
        text = visible_text(env.get_template(name).render(**_context()))
        assert ENGLISH.findall(text), name
    oauth = next(p for p in PAGES if p[0] == "oauth.html")[1]
    text = visible_text(env.get_template("oauth.html").render(**_context(**oauth)))
    assert ENGLISH.findall(text), "oauth.html"


def test_every_key_the_templates_use_is_in_the_catalog() -> None:
    from labkit.i18n.ko import KO

    used = set()
    for path in Path(TEMPLATES).glob("*.html"):
        used |= set(re.findall(r"""labkit_t\(\s*["']([a-z0-9_.]+)["']""", path.read_text()))
    assert "hub.pending.starting" in used  # the pattern finds the calls
    assert not sorted(k for k in used if k not in KO and not k.endswith("."))


@pytest.mark.parametrize(("status", "message", "message_html"), [
    (403, "Action is not authorized with current scopes; requires any of [admin-ui]", ""),
    (403, "User kim02 does not have access to kim01's server", ""),
    (404, "No such user: nobody", ""),
    (429, "Too many users trying to log in right now. Try again in 27 seconds.", ""),
    (500, "Unhandled error starting server kim01", ""),
    (503, "", "Your server appears to be down. Try restarting it <a href='/hub/home'>from "
              "the hub</a>"),
    (502, "", ""),
    (418, "I'm a teapot", ""),
])
def test_error_pages_say_it_in_korean_and_never_show_jupyterhubs_english(
        status: int, message: str, message_html: str) -> None:
    """Issue 13: a student meets these (another student's /user/<name>/, /hub/admin, a login
    storm, a stopped server behind the proxy); JupyterHub's English detail stays in its log."""
    html = _env().get_template("error.html").render(**_context(
        status_code=status, status_message="Forbidden", message=message,
        message_html=message_html, exception=None))
    text = visible_text(html)
    key = f"hub.error.{status}" if status != 418 else "hub.error.other"
    assert t(key) in text and t("hub.error.title", status=status) in text, text
    for english in (message, "appears to be down", "Forbidden"):
        assert not english or english not in html, english
    assert not re.search(r"[A-Za-z]{4,}", re.sub(r"\([^)]*\)", "", text)), text


def test_error_page_shows_labkits_own_korean_message() -> None:
    korean = t("hub.disk.full", size=512, free=100, reserve=1024)
    html = _env().get_template("error.html").render(**_context(
        status_code=500, message=korean, exception=None))
    assert korean in visible_text(html)
