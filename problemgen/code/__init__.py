"""Code grading: the coding-task engine, the task content (``tasks/``) and the sandbox (``sandbox/``).

The engine (base, inputs, compare, static, grade) runs a task's cases on student code through
the sandbox and compares raw arrays in the trusted parent. May import: ``problemgen.model``,
``problemgen.misconceptions``, ``problemgen.errors``; task content may import ``reference``; the sandbox
imports nothing of the project outside itself and ``problemgen.errors``.
"""
