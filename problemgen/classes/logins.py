"""Whose GitHub Classroom repository is it: the roster login a name ``<assignment prefix>-<login>`` ends in.

Two graders read these names: ``grade``/``grade-code --layout classroom`` (a folder of cloned repositories)
and the grader that ``export github-classroom`` ships in every student's repository. They follow this one
rule, so a name never belongs to one student in the gradebook and to another on GitHub.

The rule: the longest roster login ``l`` such that the name ends in ``-l`` after a non-empty prefix,
ignoring case and a leading ``@`` a roster may write before a login. A login may hold ``-``, so a name can
end in two logins (``hw1-x-bob``: ``x-bob`` and ``bob``). GitHub Classroom makes every name of an assignment
from one prefix, so with the prefix ``hw1`` that repository is x-bob's; the longest login is wrong only when
the prefix itself ends in ``-x`` and the roster also holds ``x-bob``, and then the wrong pick shows (two
repositories of one student in a class run, a sheet of another variant on GitHub). Such a name is never
silent: :func:`repository_login` returns a warning line saying which logins it fits and which was taken.

Standard library only: the grader shipped to students imports it on every push.
"""

from __future__ import annotations

from collections.abc import Iterable


def fold_login(login: str) -> str:
    """A GitHub login as logins are compared: trimmed, without a leading ``@``, ignoring case."""
    return login.strip().removeprefix("@").casefold()


def logins_ending(name: str, logins: Iterable[str]) -> list[str]:
    """Every one of ``logins`` that ``name`` ends in after ``-`` and a non-empty prefix, longest first."""
    folded = name.casefold()
    fits = {}
    for login in logins:
        key = fold_login(login)
        if key and len(folded) > len(key) + 1 and folded.endswith("-" + key):
            fits.setdefault(key, login)
    return [fits[key] for key in sorted(fits, key=len, reverse=True)]


def repository_login(name: str, logins: Iterable[str]) -> tuple[str | None, str]:
    """(the login of ``logins`` that repository ``name`` belongs to, or None; a warning line when the name
    fits more than one login, else ""). ``name`` is the repository's own name, without ``owner/``."""
    fits = logins_ending(name, logins)
    if not fits:
        return None, ""
    if len(fits) == 1:
        return fits[0], ""
    return fits[0], (f"{name} fits the GitHub logins {' and '.join(fits)}: taken as {fits[0]}'s, the longest "
                     "(GitHub Classroom gives every repository of an assignment the same prefix)")
