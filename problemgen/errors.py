"""The project exceptions, in a module with no imports so the fastest CLI paths can use them."""


class ProblemgenError(Exception):
    """A user-caused problem with a clear, one-line message.

    The CLI turns it into ``error: <message>`` and exit code 2. Anything else escaping is a bug.
    """


class WriteFailed(ProblemgenError):
    """An output could not be written while the command ran: the disk or a quota is full, a file-size
    limit was reached, the folder was made read-only or removed. Not the user's input, so the CLI exits 4,
    not 2; what an earlier run wrote under the same names is kept whole (``problemgen.safewrite``)."""
