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

from collections.abc import Iterable, Mapping


def fold_login(login: str) -> str:
    """A GitHub login as logins are compared: trimmed, without a leading ``@``, ignoring case."""
    return login.strip().removeprefix("@").casefold()


def login_index(logins: Iterable[str]) -> dict[str, str]:
    """Each login as :func:`fold_login` folds it -> the first of ``logins`` folding to it (empty ones left out).

    Made once for a class, it lets :func:`logins_ending` look up the few endings a name has instead of
    trying every login of the roster on every name (a class run of a 5,000-student download would
    otherwise compare 25 million pairs)."""
    index: dict[str, str] = {}
    for login in logins:
        key = fold_login(login)
        if key:
            index.setdefault(key, login)
    return index


def logins_ending(name: str, logins: Iterable[str] | Mapping[str, str]) -> list[str]:
    """Every one of ``logins`` that ``name`` ends in after ``-`` and a non-empty prefix, longest first.

    ``logins``: the roster's logins, or their :func:`login_index` when many names are read against one roster.
    Each ``-`` of the name after its first character starts one ending to look up, the leftmost the longest."""
    index = logins if isinstance(logins, Mapping) else login_index(logins)
    folded = name.casefold()
    endings = (folded[i + 1:] for i in range(1, len(folded) - 1) if folded[i] == "-")
    return [index[ending] for ending in endings if ending in index]


def repository_login(name: str, logins: Iterable[str] | Mapping[str, str]) -> tuple[str | None, str]:
    """(the login of ``logins`` that repository ``name`` belongs to, or None; a warning line when the name
    fits more than one login, else ""). ``name`` is the repository's own name, without ``owner/``;
    ``logins`` as :func:`logins_ending` takes them."""
    fits = logins_ending(name, logins)
    if not fits:
        return None, ""
    if len(fits) == 1:
        return fits[0], ""
    return fits[0], (f"{name} fits the GitHub logins {' and '.join(fits)}: taken as {fits[0]}'s, the longest "
                     "(GitHub Classroom gives every repository of an assignment the same prefix)")
