"""The secrets problemgen takes from the environment: a class set's secret and a grader's hidden-test secret.

Both come only from a named environment variable, never from the command line, where every user of the
machine can read them. Both must be random rather than memorable: a student holding one handout (or
the public parts of a grader) can test a guessed secret offline, since the printed variant tag and
every printed number follow from it. So a secret that is short, or made of a few characters repeated,
is refused, and the message shows how to make a random one.

White space around the value (a newline read from a file) is no part of the secret: the same secret
with or without it gives the same class set and the same hidden tests.
"""

from __future__ import annotations

import os

from problemgen.errors import ProblemgenError

MIN_CHARS = 16
MIN_DISTINCT = 8


def read_secret(env_var: str, what: str = "class secret") -> str:
    """The stripped value of ``env_var``; a ProblemgenError saying how to make a good one otherwise."""
    secret = os.environ.get(env_var, "").strip()
    hint = f"export {env_var}=$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
    if not secret:
        raise ProblemgenError(f"environment variable {env_var} is not set or empty; set it to a long random "
                              f"{what}, e.g. {hint}")
    if len(secret) < MIN_CHARS:
        raise ProblemgenError(f"the {what} in {env_var} has {len(secret)} characters; at least {MIN_CHARS} are "
                              f"needed so nobody can guess it, e.g. {hint}")
    if len(set(secret)) < MIN_DISTINCT:
        raise ProblemgenError(f"the {what} in {env_var} uses {len(set(secret))} different characters; a random "
                              f"one (at least {MIN_DISTINCT}) is needed so nobody can guess it, e.g. {hint}")
    return secret
