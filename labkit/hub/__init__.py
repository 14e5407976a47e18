"""The class hub: every student their own isolated lab on the school's server (JupyterHub).

``make hub ROSTER=class.csv TEACHER=<name>`` / ``python -m labkit.hub serve`` starts JupyterHub
with configurable-http-proxy, as an operator would (The Littlest JupyterHub's conventions,
https://tljh.jupyter.org):

- :mod:`labkit.hub.roster` -- the class roster and usernames (:mod:`labkit.data.roster`'s);
- :mod:`labkit.hub.state` -- the hub's private state directory and the teacher's settings;
- :mod:`labkit.hub.accounts` -- one system account per student (``jupyter-<username>``);
- :mod:`labkit.hub.limits` -- per-student memory/CPU/process limits (cgroups or rlimits);
- :mod:`labkit.hub.auth` -- roster allow-list, first-login code then own password, throttling;
- :mod:`labkit.hub.passwords` / :mod:`labkit.hub.slips` / :mod:`labkit.hub.sessions` -- the
  passwords and first-login codes, the printed slips, ending a user's sessions and tokens;
- :mod:`labkit.hub.spawner` -- each student's server under their account, curriculum copied;
- :mod:`labkit.hub.curriculum` -- the merge of ``notebooks/`` into each home;
- :mod:`labkit.hub.config` -- JupyterHub's configuration, services (idle culler, class page);
- :mod:`labkit.hub.singleuser` -- the jupyter_server extension of every student's server;
- :mod:`labkit.hub.activity` -- what counts as a student's activity for the idle culler;
- :mod:`labkit.hub.gpushare` -- each student's GPU share (MIG device, whole GPU or shared);
- :mod:`labkit.hub.classpage` -- the teacher's class page (a hub service; it reads the exercise
  results from each student's home itself, :mod:`labkit.hub.results` checks them);
- :mod:`labkit.hub.plan` / :mod:`labkit.hub.k8s` -- the class MIG layout for the operator and
  zero-to-jupyterhub values for a school that outgrows one server.

This package imports nothing heavy.
"""
