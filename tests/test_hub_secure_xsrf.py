"""Under HTTPS every cookie of the class is Secure, the students' servers' own ``_xsrf`` too
(the trial of issue 24 found it sent without Secure on ``/user/<name>/``)."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from labkit.hub import singleuser_config


@pytest.mark.parametrize(("tls", "kwargs"), [
    ("1", {"path": "/user/minji/", "secure": True}),
    (None, None),  # plain HTTP: jupyter_server's own default ({"path": base_url})
])
def test_a_students_server_sets_its_xsrf_cookie_secure_under_tls(
        monkeypatch: pytest.MonkeyPatch, tls: str | None, kwargs: dict[str, object] | None,
) -> None:
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/minji/")
    if tls is None:
        monkeypatch.delenv(singleuser_config.ENV_HUB_TLS, raising=False)
    else:
        monkeypatch.setenv(singleuser_config.ENV_HUB_TLS, tls)
    c = Config()
    singleuser_config.configure(c)
    assert c.ServerApp.tornado_settings.get("xsrf_cookie_kwargs") == kwargs
    assert c.ServerApp.kernel_manager_class == "labkit.hub.voila_pool.LessonPoolKernelManager"
