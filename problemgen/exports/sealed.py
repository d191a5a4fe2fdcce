"""Sealed keys: a class's variants kept in a student-visible repository, readable only with the secret.

GitHub Classroom gives every student a copy of one template repository, so the grader's data for a
whole class (the frozen variants, which hold the answers, and the login -> roster id map) must sit in
each copy; sealing keeps it unreadable there. The key is the repository secret the workflow receives.

Construction (standard library only; deterministic, so the same export gives the same bytes): a
synthetic IV ``iv = HMAC-SHA256(k_mac, plaintext)``, a keystream of ``HMAC-SHA256(k_enc, iv ‖ counter)``
blocks XORed with the zlib-compressed plaintext (a PRF in counter mode), and on opening the IV
recomputed and compared in constant time (SIV: the IV authenticates). ``k_enc`` and ``k_mac`` are
derived from the secret with HMAC under distinct labels. Equal plaintexts give equal blobs; nothing
else leaks beyond the length.

This protects the keys from students reading their repository. It cannot protect them from a student
who edits the workflow to print the secret: a workflow runs with the student's own changes. The
instructor notes say so.
"""

from __future__ import annotations

import hashlib
import hmac
import zlib

from problemgen.errors import ProblemgenError

MAGIC = b"problemgen-sealed/1\n"
_BLOCK = 32


def _keys(secret: str) -> tuple[bytes, bytes]:
    master = secret.encode("utf-8")
    return (hmac.new(master, b"problemgen.sealed/1 encryption", hashlib.sha256).digest(),
            hmac.new(master, b"problemgen.sealed/1 authentication", hashlib.sha256).digest())


def _keystream(key: bytes, iv: bytes, length: int) -> bytes:
    blocks = (length + _BLOCK - 1) // _BLOCK
    return b"".join(hmac.new(key, iv + i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range(blocks))[:length]


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def seal(secret: str, plaintext: bytes) -> bytes:
    enc, mac = _keys(secret)
    packed = zlib.compress(plaintext, 9)
    iv = hmac.new(mac, packed, hashlib.sha256).digest()
    return MAGIC + iv + _xor(packed, _keystream(enc, iv, len(packed)))


def unseal(secret: str, blob: bytes) -> bytes:
    """The plaintext, or ProblemgenError when the secret is wrong or the blob was altered."""
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + _BLOCK:
        raise ProblemgenError("not a problemgen sealed file")
    enc, mac = _keys(secret)
    iv, body = blob[len(MAGIC):len(MAGIC) + _BLOCK], blob[len(MAGIC) + _BLOCK:]
    packed = _xor(body, _keystream(enc, iv, len(body)))
    if not hmac.compare_digest(iv, hmac.new(mac, packed, hashlib.sha256).digest()):
        raise ProblemgenError("the sealed keys do not open with this secret (wrong secret, or the file was changed)")
    return zlib.decompress(packed)
