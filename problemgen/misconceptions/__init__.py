"""The one catalogue of named mistakes: tag, title, hint and the buggy computation behind each value.

``entries`` holds the data (imported by ``problemgen.model.core``, so it imports nothing);
``catalogue`` is what generators and tasks use (``mistake``, ``describe``, ``safely``); ``attention``,
``multihead``, ``norms``, ``layers``, ``masks`` and ``positional`` hold the buggy computations.
This ``__init__`` imports nothing, so importing ``entries`` stays cheap and free of cycles.

May import: ``reference``, ``problemgen.model.core``, ``problemgen.errors``.
"""
