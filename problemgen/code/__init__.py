"""Code grading: the coding-task engine, the task content (``tasks/``) and the sandbox (``sandbox/``).

The engine (base, inputs, compare, static, grade) runs a task's cases on student code through
the sandbox and compares raw arrays in the trusted parent. The engine may import:
``problemgen.model``, ``problemgen.answers``, ``problemgen.misconceptions``, ``problemgen.sheets`` (the
report types) and the sandbox — never the tasks or ``reference``; task content (``tasks/``) may import
the engine and ``reference``; the sandbox imports nothing of the project outside itself and
``problemgen.errors``.
"""
