"""The credit policy of a bank item, applied to a part's verdict after its answer type has checked it.

Answer types decide *what* is right (``correct``, ``wrong``, ``invalid``) and how much of a matrix is
right; the bank decides what that is *worth*:

- ``mistake_credit`` (0–1, default 0): an answer equal to a named mistake earns exactly this fraction.
  Without it, partial credit would be an accident of the mistake: a mask applied after the softmax keeps
  the blocked zeros right and would earn about a third, forgetting 1/√d_k earns whatever entries happen
  to agree — two students making the same mistake could score differently;
- ``credit = "all-or-nothing"``: a part scores 1 or 0 (no per-entry partial credit);
  ``credit = "entries"`` (default) keeps the answer type's fraction of entries within tolerance.

Kept apart from the answer types so a change of policy never touches how an answer is read.
"""

from __future__ import annotations

from dataclasses import replace


def apply_credit(verdict, credit: str = "entries", mistake_credit: float = 0.0):
    """The verdict (a ``PartResult``) rescored under the item's policy; status and feedback unchanged."""
    if verdict.status != "wrong":
        return verdict
    if verdict.mistake:
        return replace(verdict, score=float(mistake_credit))
    if credit == "all-or-nothing":
        return replace(verdict, score=0.0)
    return verdict
