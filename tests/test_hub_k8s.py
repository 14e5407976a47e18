"""labkit.hub.k8s: zero-to-jupyterhub values from the roster, checked against the chart.

Two checks of the rendered values against the chart:

- structural (always): the keys and types the chart's ``jupyterhub/values.schema.yaml``
  (jupyterhub/zero-to-jupyterhub-k8s @48ea50e, read 2026-12-01) allows at the places labkit
  writes, transcribed here by hand;
- the published schema itself (when ``LABKIT_Z2JH_SCHEMA`` names a copy of
  ``values.schema.yaml``): the values merged over the chart's defaults (``values.yaml`` beside
  the schema, as Helm merges them) validated with jsonschema. The schema is not committed.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from labkit.data.roster import RosterEntry
from labkit.hub import k8s
from labkit.validate import InputError

ROOT = Path(__file__).resolve().parents[1]
ROSTER = [RosterEntry(f"s{i:02d}", f"학생{i}") for i in range(1, 29)]


def render(**kw: Any) -> dict[str, Any]:
    kw.setdefault("policy", "mig")
    kw.setdefault("gpu", "H100-80GB")
    return k8s.render_values(ROSTER, "teacher", **kw)


def test_render_values_roster_authenticator_and_teacher_role_not_admin() -> None:
    hub = render()["hub"]
    config = hub["config"]
    assert config["Authenticator"]["allowed_users"] == [e.username for e in ROSTER] + ["teacher"]
    assert config["Authenticator"]["admin_users"] == []  # issue 23: the teacher is no admin
    assert config["JupyterHub"]["authenticator_class"] == "labkit.hub.auth.RosterAuthenticator"
    assert config["RosterAuthenticator"] == {"teacher_users": ["teacher"],
                                             "state_dir": "/srv/jupyterhub/labkit"}
    assert hub["image"] == {"name": "labkit-hub", "tag": "0.1.0"}
    text = k8s.values_yaml(render())
    assert "FirstUse" not in text and "firstuse" not in text.lower()
    # the one-server hub's teacher role (labkit.hub.config), minus its class page service
    from labkit.hub.config import TEACHER_SCOPES, teacher_roles

    roles = hub["loadRoles"]
    one_server = teacher_roles("teacher")[0]
    assert roles["teacher"]["scopes"] == [s for s in one_server["scopes"]
                                          if not s.startswith("access:services")]
    assert roles["teacher"]["users"] == ["teacher"] and roles["admin"] == {"users": []}
    assert not any(s.startswith(("access:servers", "admin", "tokens"))
                   for s in roles["teacher"]["scopes"])
    assert set(roles["teacher"]["scopes"]) < set(TEACHER_SCOPES)


def test_rendered_config_runs_the_roster_authenticator_on_its_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The values' hub.config and extraConfig, applied as the chart's jupyterhub_config.py does
    (with the state on a temp dir instead of the hub's volume): no first use for anyone, the
    slip's code logs a student in, the teacher needs the password set in the terminal."""
    from traitlets.config import Config

    from labkit.hub.auth import RosterAuthenticator
    from labkit.hub.roster import Student
    from labkit.hub.state import HubState
    from tests.test_hub_auth import _Handler, _login

    monkeypatch.setattr("labkit.hub.auth.asyncio.sleep", _no_wait)
    hub = render()["hub"]
    c = Config(copy.deepcopy(hub["config"]))
    c.RosterAuthenticator.state_dir = str(tmp_path / "state")
    for snippet in hub["extraConfig"].values():
        exec(compile(snippet, "extraConfig", "exec"), {"c": c})
    state = HubState(tmp_path / "state")
    assert state.settings().teacher == "teacher"
    state.save_roster([Student(e.username, e.display_name) for e in ROSTER])
    given = state.accounts.hand_out(e.username for e in ROSTER)
    assert given
    auth = RosterAuthenticator(config=c)
    assert auth.teachers() == {"teacher"} and not auth.admin_users
    for name in ("s01", "teacher"):  # first use: refused
        assert _login(auth, name, "i-came-first-1") is None
    code = state.accounts.codes()["s01"]
    ask = _Handler(request=SimpleNamespace(remote_ip="10.0.0.9"))
    assert _login(auth, "s01", code, handler=ask) is None and ask.labkit_first_login == "s01"
    assert _login(auth, "s01", code, new_password="s01-own-pass",
                  new_password2="s01-own-pass") == "s01"
    assert _login(auth, "teacher", code) is None
    state.accounts.set_password("teacher", "teacher-pass-1")  # roster set-password (stdin)
    assert _login(auth, "teacher", "teacher-pass-1") == "teacher"


async def _no_wait(_seconds: float) -> None:
    return None


def test_render_values_mig_profile_comes_from_the_class_plan() -> None:
    profile = render()["singleuser"]["profileList"][0]
    # 28 students on H100-80GB: 4 GPUs x 7 x 1g.10gb (labkit.hub.plan)
    assert profile["kubespawner_override"] == {
        "extra_resource_limits": {"nvidia.com/mig-1g.10gb": "1"}}
    eight = render(gpus=8)["singleuser"]["profileList"][0]["kubespawner_override"]
    assert eight["extra_resource_limits"] == {"nvidia.com/mig-1g.20gb": "1"}
    single = render(mig_strategy="single")["singleuser"]["profileList"][0]
    assert single["kubespawner_override"]["extra_resource_limits"] == {"nvidia.com/gpu": "1"}


@pytest.mark.parametrize(("policy", "gpu", "slug"), [
    ("whole", None, "labkit-whole"), ("shared", None, "labkit-shared"),
    ("auto", "H100-80GB", "labkit-mig"), ("auto", "L40S", "labkit-whole"),
    ("auto", None, "labkit-whole"),
])
def test_render_values_policies(policy: str, gpu: str | None, slug: str) -> None:
    profile = render(policy=policy, gpu=gpu)["singleuser"]["profileList"][0]
    assert profile["slug"] == slug
    if slug != "labkit-mig":
        assert profile["kubespawner_override"]["extra_resource_limits"] == {"nvidia.com/gpu": "1"}


def test_render_values_limits_and_culler() -> None:
    values = render(mem="3G", cpu=2, cull_timeout_s=1800, image="ghcr.io/school/labkit:1.0")
    assert values["singleuser"]["memory"] == {"limit": "3G", "guarantee": "3G"}
    assert values["singleuser"]["cpu"] == {"limit": 2.0, "guarantee": 1.0}
    assert values["singleuser"]["image"] == {"name": "ghcr.io/school/labkit", "tag": "1.0"}
    assert values["cull"] == {"enabled": True, "users": False, "adminUsers": False,
                              "timeout": 1800, "every": 60}


def test_render_values_cull_like_the_one_server_hub_by_default() -> None:
    from labkit.hub.state import HubSettings

    cull = render()["cull"]
    assert (cull["timeout"], cull["every"]) == (600, 60)  # TLJH's 600 s, looked at every minute
    assert HubSettings().cull_timeout_s == 600
    assert render(cull_timeout_s=90)["cull"]["every"] == 45


def test_render_values_image_and_curriculum_step(tmp_path: Path) -> None:
    single = render()["singleuser"]
    assert single["image"] == {"name": "labkit-singleuser", "tag": "0.1.0"}
    command = single["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert command == ["python", "-m", "labkit.hub.curriculum", "--from",
                       "/srv/labkit/notebooks", "/home/jovyan/labkit"]
    assert single["defaultUrl"] == "/lab/tree/labkit"
    # run the hook's command here, twice, with the checkout's notebooks as the image's: the
    # first copies every lesson, the second keeps what the student changed
    home = tmp_path / "home"
    src = ROOT / "notebooks"
    run = [sys.executable, *command[1:4], str(src), str(home / "labkit")]
    subprocess.run(run, cwd=ROOT, check=True, capture_output=True, timeout=120)
    lessons = sorted(p.name for p in src.glob("*.ipynb"))
    assert lessons and sorted(p.name for p in (home / "labkit").glob("*.ipynb")) == lessons
    mine = home / "labkit" / lessons[0]
    mine.write_text("{}", encoding="utf-8")
    subprocess.run(run, cwd=ROOT, check=True, capture_output=True, timeout=120)
    assert mine.read_text(encoding="utf-8") == "{}"


@pytest.mark.parametrize(("kw", "field"), [
    ({"policy": "best"}, "policy"),
    ({"policy": "mig", "gpu": None}, "gpu"),
    ({"policy": "mig", "gpu": "V100"}, "model"),
    ({"gpus": 3}, "students"),                     # 28 students do not fit on 3 H100s
    ({"mem": "2 gigabytes"}, "mem"),
    ({"mem": "-2G"}, "mem"),
    ({"cpu": 0}, "cpu"),
    ({"cpu": 100}, "cpu"),
    ({"cpu": True}, "cpu"),
    ({"cull_timeout_s": 10}, "cull_timeout_s"),
    ({"mig_strategy": "none"}, "mig_strategy"),
    ({"image": "labkit"}, "image"),
    ({"image": "host:5000/labkit"}, "image"),
    ({"hub_image": "labkit-hub"}, "hub_image"),
])
def test_render_values_rejects_bad_input(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        render(**kw)
    assert err.value.field == field


def test_render_values_rejects_a_bad_teacher_or_an_empty_class() -> None:
    with pytest.raises(InputError, match="teacher"):
        k8s.render_values(ROSTER, "Teacher Kim")
    with pytest.raises(InputError, match="no student"):
        k8s.render_values([RosterEntry("teacher", "선생님")], "teacher")


# --- structural check against the chart (transcribed from values.schema.yaml) --------------------

_CULL: dict[str, type | tuple[type, ...]] = {
    "enabled": bool, "users": (bool, type(None)), "adminUsers": (bool, type(None)),
    "removeNamedServers": (bool, type(None)), "timeout": (int, type(None)),
    "every": (int, type(None)), "concurrency": (int, type(None)), "maxAge": (int, type(None))}
_PROFILE_KEYS = {"display_name", "slug", "description", "default", "kubespawner_override",
                 "profile_options"}
_QUANTITY = re.compile(r"^\d+(\.\d+)?([KMGT]i?)?$")


def check_structure(values: dict[str, Any]) -> None:
    """The parts of the chart's schema that labkit's values touch."""
    assert set(values) <= {"hub", "singleuser", "cull", "proxy", "scheduling", "prePuller"}
    hub = values["hub"]
    assert set(hub) <= {"config", "baseUrl", "extraConfig", "services", "loadRoles", "image"}
    assert set(hub["image"]) >= {"name", "tag"}  # hub.image: name, tag (strings)
    assert all(isinstance(hub["image"][k], str) for k in ("name", "tag"))
    for role_name, role in hub.get("loadRoles", {}).items():  # an object of role objects
        assert isinstance(role_name, str) and isinstance(role, dict)
        assert set(role) <= {"name", "description", "scopes", "users", "groups", "services"}
    for snippet in hub.get("extraConfig", {}).values():  # an object of Python snippets
        assert isinstance(snippet, str)
    for section, body in hub["config"].items():  # patternProperties ^[A-Z].*$, type object
        assert re.match(r"^[A-Z]", section) and isinstance(body, dict), section
    single = values["singleuser"]
    for key in ("memory", "cpu"):  # additionalProperties: false, limit/guarantee only
        assert set(single[key]) <= {"limit", "guarantee"}
    for v in single["memory"].values():  # type [number, string, null]
        assert isinstance(v, (int, float, str)) and _QUANTITY.match(str(v))
    for v in single["cpu"].values():  # type [number, null]: a string here breaks the chart
        assert isinstance(v, (int, float)) and not isinstance(v, bool)
    assert isinstance(single["defaultUrl"], str)
    # image: required name, tag (strings)
    assert set(single["image"]) >= {"name", "tag"}
    assert all(isinstance(single["image"][k], str) for k in ("name", "tag"))
    hooks = single["lifecycleHooks"]  # additionalProperties: false; a container Lifecycle
    assert set(hooks) <= {"postStart", "preStop"}
    for hook in hooks.values():
        assert set(hook) == {"exec"} and all(isinstance(a, str) for a in hook["exec"]["command"])
    profiles = single["profileList"]  # type array (passed to KubeSpawner.profile_list)
    assert isinstance(profiles, list) and profiles
    assert sum(1 for p in profiles if p.get("default")) == 1
    for p in profiles:
        assert set(p) <= _PROFILE_KEYS and isinstance(p["display_name"], str)
        limits = p["kubespawner_override"]["extra_resource_limits"]
        for name, qty in limits.items():  # Kubernetes extended resource: quantity as string
            assert re.match(r"^nvidia\.com/(gpu|mig-\d+g\.\d+gb)$", name), name
            assert isinstance(qty, str) and qty.isdigit()
    cull = values["cull"]
    assert "enabled" in cull and set(cull) <= set(_CULL)  # required: enabled
    for key, v in cull.items():
        assert isinstance(v, _CULL[key]), key
        if _CULL[key] == (int, type(None)):  # the schema's integer is no JSON boolean
            assert not isinstance(v, bool), key


@pytest.mark.parametrize("policy", ["mig", "whole", "shared", "auto"])
def test_render_values_has_the_chart_structure(policy: str) -> None:
    values = render(policy=policy, image="labkit:1")
    check_structure(values)
    check_structure(yaml.safe_load(k8s.values_yaml(values)))  # survives the YAML round trip


def test_check_structure_catches_what_the_chart_rejects() -> None:
    bad = copy.deepcopy(render())
    bad["singleuser"]["cpu"]["limit"] = "1"
    with pytest.raises(AssertionError):
        check_structure(bad)
    worse = copy.deepcopy(render())
    worse["cull"]["timeout"] = "1h"
    with pytest.raises(AssertionError):
        check_structure(worse)


# --- the chart's published schema ----------------------------------------------------------


def _merge(base: Any, over: Any) -> Any:
    """Helm's values merge: maps merge key by key, anything else is replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _merge(base.get(key), value) if key in base else value
        return out
    return over


def test_render_values_validates_against_the_published_chart_schema() -> None:
    schema_path = os.environ.get("LABKIT_Z2JH_SCHEMA")
    if not schema_path:
        pytest.skip("set LABKIT_Z2JH_SCHEMA to jupyterhub/values.schema.yaml of "
                    "jupyterhub/zero-to-jupyterhub-k8s (not committed here)")
    jsonschema = pytest.importorskip("jsonschema")
    schema_file = Path(schema_path)
    schema = yaml.safe_load(schema_file.read_text(encoding="utf-8"))
    defaults_file = schema_file.with_name("values.yaml")
    if not defaults_file.exists():
        pytest.skip(f"the chart's values.yaml is not beside {schema_file} (Helm validates the "
                    "values merged over it)")
    defaults = yaml.safe_load(defaults_file.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    assert not list(validator.iter_errors(defaults)), "the chart's own defaults must pass"
    for policy in ("mig", "whole", "shared"):
        values = yaml.safe_load(k8s.values_yaml(render(policy=policy, image="labkit:1")))
        errors = [f"{'.'.join(map(str, e.path))}: {e.message}"
                  for e in validator.iter_errors(_merge(defaults, values))]
        assert not errors, errors
    broken = _merge(defaults, {"singleuser": {"cpu": {"limit": "1"}}})
    assert list(validator.iter_errors(broken)), "the schema must reject a CPU limit string"


# --- the CLI -------------------------------------------------------------------------------------


def test_main_k8s_writes_values_from_a_roster_file(tmp_path: Path) -> None:
    roster = tmp_path / "class.csv"
    roster.write_text("username,display_name\nkim01,김민준\nlee02,이서연\n", encoding="utf-8")
    out = tmp_path / "values.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "labkit.hub.k8s", "--roster", str(roster), "--teacher", "park",
         "--policy", "mig", "--gpu", "A100-40GB", "--mem", "2G", "--cpu", "1", "--out",
         str(out)], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    values = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert values["hub"]["config"]["Authenticator"]["allowed_users"] == ["kim01", "lee02",
                                                                         "park"]
    limits = values["singleuser"]["profileList"][0]["kubespawner_override"]
    assert limits["extra_resource_limits"] == {"nvidia.com/mig-1g.5gb": "1"}


def test_main_k8s_reports_a_bad_roster_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / "class.csv"
    roster.write_text("username,display_name\nKim 01,김민준\n", encoding="utf-8")
    assert k8s.main_k8s(["--roster", str(roster), "--teacher", "park"]) == 2
    err = capsys.readouterr().err
    assert "values.yaml을 만들 수 없습니다" in err and "line 2" in err
