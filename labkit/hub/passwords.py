"""The class hub's passwords and first-login codes, in the hub's private state directory.

Accounts are handed out by the teacher, never claimed by whoever comes first:

- ``roster import`` (and ``make hub``) gives every student without a password a one-time
  **first-login code** (:func:`new_code`): :data:`CODE_LENGTH` symbols of :data:`CODE_ALPHABET`
  (no 0/O, 1/I lookalikes), printed on the slips the teacher hands out
  (:mod:`labkit.hub.slips`). The student logs in with it once and chooses their own password
  (:class:`labkit.hub.auth.RosterAuthenticator`); the code is then gone.
- the teacher's password is never set at a login: ``make hub`` / ``serve`` asks for it in the
  terminal, ``roster set-password NAME`` sets anyone's from standard input.

Both live in the state directory (root-only 0700, :class:`labkit.hub.state.HubState`), each a
0600 JSON file: ``passwords.json`` (bcrypt hashes, ``{"username": "$2b$..."}``) and
``first_login_codes.json`` (``{"username": "ABCD-EFGH"}``; in clear, so the teacher can print
them again, and only until the student's first login). The hub and the teacher's commands
write them at the same time (a first login while ``roster import`` runs), so every change is a
read-modify-write under an exclusive ``flock(2)`` on ``accounts.lock``.

References
----------
.. [1] NIST SP 800-63B (2017), 5.1.1.2 "Memorized Secret Verifiers": at least 8 characters;
   5.1.2.1 "Look-Up Secrets": at least 20 bits of entropy from an approved random generator,
   with rate limiting (labkit.hub.auth's throttle) -- 8 symbols of 32 are 40 bits.
.. [2] bcrypt (https://pypi.org/project/bcrypt/): hashes at most 72 bytes of password (bcrypt
   4.1+ raises on longer ones), so a longer password is refused rather than cut.
"""

from __future__ import annotations

import fcntl
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import bcrypt

__all__ = ["CODE_ALPHABET", "CODE_LENGTH", "MAX_PASSWORD_BYTES", "MIN_PASSWORD", "Accounts",
           "PasswordRejected", "new_code", "normalize_code"]

#: The symbols of a first-login code: upper-case letters and digits without 0, O, 1 and I,
#: which read alike on a printed slip. [32 symbols, 5 bits each]
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: Symbols in a code (written as two groups of four): 40 bits, twice NIST's 20 [1]_.
CODE_LENGTH = 8
#: The shortest password a person may choose (NIST SP 800-63B 5.1.1.2 [1]_). [characters]
MIN_PASSWORD = 8
#: The longest: what bcrypt hashes [2]_. [bytes of UTF-8]
MAX_PASSWORD_BYTES = 72
#: bcrypt's cost (log2 rounds): the library's default, ~0.2 s per check on one core [2]_.
BCRYPT_ROUNDS = 12


class PasswordRejected(ValueError):
    """A password that may not be set; ``rule`` is "short", "long" or "mismatch"."""

    def __init__(self, rule: str, message: str) -> None:
        self.rule = rule
        super().__init__(message)


def new_code() -> str:
    """Return a fresh first-login code, ``XXXX-XXXX`` (:data:`CODE_ALPHABET`, ``secrets``)."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:4]}-{raw[4:]}"


def normalize_code(typed: str) -> str:
    """Return a typed code as stored: upper case, without spaces and hyphens.

    >>> normalize_code(" abcd-efgh ")
    'ABCDEFGH'
    """
    return "".join(ch for ch in typed.upper() if ch not in " -\t")


def check_new_password(password: str, confirm: str | None = None) -> str:
    """Return ``password`` if a person may choose it (and typed it twice alike).

    Raises
    ------
    PasswordRejected
        Shorter than :data:`MIN_PASSWORD` characters ("short"), longer than
        :data:`MAX_PASSWORD_BYTES` bytes ("long"), or unlike ``confirm`` ("mismatch").
    """
    if len(password) < MIN_PASSWORD:
        raise PasswordRejected("short", f"a password has at least {MIN_PASSWORD} characters")
    if len(password.encode("utf-8")) > MAX_PASSWORD_BYTES:
        raise PasswordRejected("long", f"a password has at most {MAX_PASSWORD_BYTES} bytes")
    if confirm is not None and not hmac.compare_digest(password.encode(), confirm.encode()):
        raise PasswordRejected("mismatch", "the two passwords differ")
    return password


class Accounts:
    """The passwords and first-login codes of one hub (files in its state directory).

    Parameters
    ----------
    root : Path
        The hub's private state directory (:attr:`labkit.hub.state.HubState.root`).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.passwords_file = self.root / "passwords.json"
        self.codes_file = self.root / "first_login_codes.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.root / "accounts.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self, path: Path) -> dict[str, str]:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}

    def _write(self, path: Path, doc: dict[str, str]) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1, sort_keys=True)
        os.replace(tmp, path)

    # --- passwords -------------------------------------------------------------------------

    def with_password(self) -> set[str]:
        """Return the usernames that have a password."""
        return set(self._read(self.passwords_file))

    def has_password(self, name: str) -> bool:
        """Whether ``name`` has a password."""
        return name in self._read(self.passwords_file)

    def check_password(self, name: str, password: str) -> bool:
        """Whether ``password`` is ``name``'s (bcrypt; ~0.2 s: call it off the event loop)."""
        stored = self._read(self.passwords_file).get(name)
        raw = password.encode("utf-8")
        if stored is None or len(raw) > MAX_PASSWORD_BYTES:
            return False
        try:
            return bool(bcrypt.checkpw(raw, stored.encode("ascii")))
        except ValueError:  # a damaged hash: no login, never a crash
            return False

    def set_password(self, name: str, password: str) -> None:
        """Set ``name``'s password (and drop their first-login code: it was used).

        Raises
        ------
        PasswordRejected
            See :func:`check_new_password`.
        """
        check_new_password(password)
        hashed = bcrypt.hashpw(password.encode("utf-8"),
                               bcrypt.gensalt(BCRYPT_ROUNDS)).decode("ascii")
        with self._locked():
            doc = self._read(self.passwords_file)
            doc[name] = hashed
            self._write(self.passwords_file, doc)
            codes = self._read(self.codes_file)
            if codes.pop(name, None) is not None:
                self._write(self.codes_file, codes)

    # --- first-login codes -----------------------------------------------------------------

    def codes(self) -> dict[str, str]:
        """Return the first-login codes not used yet, ``{username: "ABCD-EFGH"}``."""
        return self._read(self.codes_file)

    def check_code(self, name: str, typed: str) -> bool:
        """Whether ``typed`` is ``name``'s unused first-login code (constant-time compare)."""
        code = self._read(self.codes_file).get(name)
        if code is None:
            return False
        return hmac.compare_digest(normalize_code(code).encode(),
                                   normalize_code(typed).encode("utf-8", "replace"))

    def hand_out(self, names: Iterable[str]) -> dict[str, str]:
        """Give each of ``names`` that has neither a password nor a code a new code.

        Returns
        -------
        dict
            The codes given now, ``{username: code}``.
        """
        with self._locked():
            passwords = self._read(self.passwords_file)
            codes = self._read(self.codes_file)
            new = {n: new_code() for n in names if n not in passwords and n not in codes}
            if new:
                self._write(self.codes_file, {**codes, **new})
        return new

    def reset(self, name: str) -> str:
        """Forget ``name``'s password and give them a new first-login code; return it."""
        with self._locked():
            doc = self._read(self.passwords_file)
            if doc.pop(name, None) is not None:
                self._write(self.passwords_file, doc)
            code = new_code()
            self._write(self.codes_file, {**self._read(self.codes_file), name: code})
        return code

    def forget(self, names: Iterable[str]) -> None:
        """Delete the passwords and codes of ``names`` (students taken off the hub)."""
        gone = set(names)
        with self._locked():
            for path in (self.passwords_file, self.codes_file):
                doc = self._read(path)
                if gone & set(doc):
                    self._write(path, {k: v for k, v in doc.items() if k not in gone})

    def copy_to(self, other: Accounts, names: Iterable[str] | None = None) -> int:
        """Copy the passwords and codes (all, or ``names``'s) into ``other``; return the passwords.

        This store is read under its lock (the two files as one consistent pair) and ``other``
        written under its own; for each name copied, ``other`` then holds exactly this store's
        password and code (one this store lacks is dropped there). A backup copies the hub's
        store into the backup directory, a restore the backup's back into the hub's.
        """
        with self._locked():
            passwords = self._read(self.passwords_file)
            codes = self._read(self.codes_file)
        wanted = set(passwords) | set(codes) if names is None else set(names)
        with other._locked():
            for path, mine in ((other.passwords_file, passwords), (other.codes_file, codes)):
                theirs = other._read(path)
                kept = {k: v for k, v in theirs.items() if k not in wanted}
                doc = {**kept, **{k: v for k, v in mine.items() if k in wanted}}
                if doc != theirs or not path.exists():
                    other._write(path, doc)
        return sum(1 for name in passwords if name in wanted)
