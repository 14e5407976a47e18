"""A pytest plugin for mutation runs: hypothesis tests draw fewer examples (``-p`` this module).

A mutant's run re-executes every test that reaches the mutated function; the property tests'
default 100 examples make that minutes per module on a 2-core machine. 20 examples still find
what the project's properties find (a broken invariant fails on most inputs), and tests that
set their own ``max_examples`` keep it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("labkit-mutation", max_examples=20, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("labkit-mutation")
