"""Run untrusted submission code in a confined child process and bring back only raw arrays.

Never imports ``reference`` or the tasks: the sandbox runs calls and returns decoded values; what
is right or wrong is decided elsewhere. See rule 8 of the design guide and ``runner.py``.

Typical use::

    sources, entry = collect("alice.py")
    staged = stage(sources, entry)
    with Sandbox(Limits(case_timeout=2.0), min_level="seccomp") as sandbox:
        run = sandbox.run(staged, [Call("softmax", (x,))])
    staged.cleanup()
"""

from problemgen.code.sandbox.isolation import LEVELS, rank
from problemgen.code.sandbox.runner import (
    BAD_OUTPUT,
    CRASH,
    IMPORT_ERROR,
    MEMORY,
    NO_RESULT,
    RETURNED,
    TIMEOUT,
    Call,
    IsolationError,
    Limits,
    Outcome,
    Sandbox,
    SandboxRun,
)
from problemgen.code.sandbox.staging import RejectedSubmission, StagedSubmission, collect, stage

__all__ = [
    "BAD_OUTPUT", "CRASH", "IMPORT_ERROR", "LEVELS", "MEMORY", "NO_RESULT", "RETURNED", "TIMEOUT",
    "Call", "IsolationError", "Limits", "Outcome", "RejectedSubmission", "Sandbox", "SandboxRun",
    "StagedSubmission", "collect", "rank", "stage",
]  # fmt: skip
