"""The teacher's class page: a JupyterHub service that shows the class and stops a server.

For the teacher only (a hub admin; the service checks both the hub's ``access:services`` and
its own admin list), in Korean: each roster student's state (online, starting, offline), GPU
share, memory used by their server and kernels, last activity, exercise results, and a button
that stops the student's server. It works with the hub's REST API through its own token, which
has only the scopes the page needs, each limited to the roster's students
(:data:`SCOPES`, filtered to the hub group ``students``, which a student imported while the
hub runs joins at import and at their first start): ``list:users``, ``read:users:activity``,
``read:servers`` (the table),
``admin:server_state`` (each server's GPU share and process id, as the hub's spawner stored
them: :class:`labkit.hub.gpushare.ShareState` -- never what the student's own server says) and
``delete:servers`` (the button). The teacher heads the table as 교사(teacher), without a stop
button.

The token never leaves the hub's side: no request carrying it goes to a student's server (a
student reads their own server's memory). The exercise results are read by the service itself
(it runs as root beside the hub) from each student's home, opened as a privileged reader must
open a file its owner controls (:func:`labkit.data.progress.read_student_progress`: no link
followed, a regular file owned by the student); the memory is the resident size of the process
tree the hub's spawner started (its ``pid`` in the server's state).


Four parts: :mod:`~labkit.hub.classpage.render`'s :func:`class_rows` and :func:`render_page`
are pure (hub API JSON and progress reports in, rows and HTML out);
:mod:`~labkit.hub.classpage.homes` reads the students' homes;
:mod:`~labkit.hub.classpage.link`'s :class:`ClassPage` talks to the hub;
:mod:`~labkit.hub.classpage.app`'s :func:`make_app` and :func:`main` run it as a tornado app
under the hub (started by the hub from :func:`service_spec`, ``python -m labkit.hub.classpage``).
Every name is importable from ``labkit.hub.classpage`` itself.

References
----------
.. [1] JupyterHub docs, "Services" (``services``, ``load_roles``, ``HubOAuthenticated``,
   ``JUPYTERHUB_SERVICE_PREFIX``, ``oauth_no_confirm``) and "Scopes" (``list:users``,
   ``read:users:activity``, ``read:servers``, ``delete:servers``, ``access:servers``, the
   ``!user=<name>`` filter).
.. [2] JupyterHub REST API: ``GET /users`` (``servers`` with ``ready``/``pending``/``url``/
   ``last_activity``), ``DELETE /users/{name}/server``.
"""


from labkit.hub.classpage.app import main, make_app
from labkit.hub.classpage.homes import (
    _work_html as _work_html,  # the tests' view of the work page
)
from labkit.hub.classpage.homes import (
    render_work,
    server_memory_bytes,
    student_home,
    student_notebooks,
)
from labkit.hub.classpage.link import ClassPage
from labkit.hub.classpage.render import (
    ENV_ADMINS,
    ENV_HOMES,
    ENV_ROSTER,
    ENV_ROSTER_FILE,
    MAX_RESULTS,
    SCOPES,
    WORK_CSP,
    StudentRow,
    class_rows,
    render_confirm,
    render_error,
    render_page,
    service_spec,
    share_text,
)

__all__ = ["ENV_ADMINS", "ENV_HOMES", "ENV_ROSTER", "ENV_ROSTER_FILE", "MAX_RESULTS",
           "SCOPES", "WORK_CSP", "ClassPage", "StudentRow", "class_rows", "main",
           "make_app", "render_confirm", "render_error", "render_page", "render_work",
           "server_memory_bytes", "service_spec", "share_text", "student_home",
           "student_notebooks"]
