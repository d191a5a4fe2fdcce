"""The one project exception, in a module with no imports so the fastest CLI paths can use it."""


class ProblemgenError(Exception):
    """A user-caused problem with a clear, one-line message.

    The CLI turns it into ``error: <message>`` and exit code 2. Anything else escaping is a bug.
    """
