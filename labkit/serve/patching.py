"""Version checks for labkit's few patches of voila / jupyter_server / jupyter_client internals.

A patch of a library's private function is only right for the releases it was written against.
:func:`require_version` and :func:`require_attribute` make a patch fail loudly, with what to do,
as soon as the installed library is outside that range or has moved the patched name, instead
of silently guarding nothing.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from packaging.version import Version

__all__ = ["PatchNotApplicableError", "require_attribute", "require_version"]


class PatchNotApplicableError(RuntimeError):
    """A private patch no longer fits the installed library."""


def require_version(distribution: str, minimum: str, below: str, patch: str) -> str:
    """Return the installed version of ``distribution`` if ``minimum <= v < below``.

    Parameters
    ----------
    distribution : str
        PyPI name (``"voila"``).
    minimum, below : str
        The tested range (``below`` excluded).
    patch : str
        What the patch does, for the message.

    Raises
    ------
    PatchNotApplicableError
        If it is not installed or outside the range.
    """
    try:
        found = version(distribution)
    except PackageNotFoundError:
        raise PatchNotApplicableError(f"labkit: {patch} needs {distribution}, which is not "
                                      "installed") from None
    if not Version(minimum) <= Version(found) < Version(below):
        raise PatchNotApplicableError(
            f"labkit: {patch} was written for {distribution} >={minimum},<{below}, but "
            f"{found} is installed. Check that the patched code is unchanged, then widen the "
            f"range in labkit (or install {distribution} from binder/constraints.txt).")
    return found


def require_attribute(owner: Any, name: str, patch: str) -> Any:
    """Return ``owner.name``, or raise if the library no longer has it.

    Raises
    ------
    PatchNotApplicableError
        If ``owner`` has no attribute ``name``.
    """
    try:
        return getattr(owner, name)
    except AttributeError:
        raise PatchNotApplicableError(
            f"labkit: {patch}: {getattr(owner, '__name__', owner)!s}.{name} is gone in the "
            "installed release; the patch no longer applies") from None
