"""The byte format between the grader and a sandboxed child: framed, typed, never pickle.

Why a format of our own: the child is hostile once student code has been imported, so whatever
it sends back must be decoded by code that cannot execute anything and cannot be made to allocate
without bound. Values are a small tree (None, bool, int, float, str, ndarray, list, dict with str
keys); arrays travel as a validated header (dtype from an allow-list, shape, byte count) followed
by their raw little-endian bytes. The same codec carries test inputs to the child.

A frame is ``MAGIC | kind:u8 | case:u32 | length:u32`` followed by ``length`` payload bytes.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

import numpy as np

MAGIC = b"PGF1"
FRAME_HEADER = struct.Struct("<4sBII")

# Frame kinds. CONFINED is the only frame the grader trusts (it is written before student code loads).
CONFINED, IMPORTED, IMPORT_FAILED, START, RESULT, ERROR, BAD_VALUE, DONE = range(8)
FRAME_KINDS = frozenset(range(8))

# dtype code -> numpy dtype (little-endian, fixed size). Anything else is refused both ways.
DTYPES: dict[int, np.dtype] = {
    1: np.dtype("<f8"),
    2: np.dtype("<f4"),
    3: np.dtype("<f2"),
    4: np.dtype("<i8"),
    5: np.dtype("<i4"),
    6: np.dtype("<i2"),
    7: np.dtype("i1"),
    8: np.dtype("<u8"),
    9: np.dtype("<u4"),
    10: np.dtype("<u2"),
    11: np.dtype("u1"),
    12: np.dtype("?"),
}
_CODES = {dt: code for code, dt in DTYPES.items()}


class WireError(ValueError):
    """The bytes do not follow the format (or exceed a limit); the sender is at fault."""


@dataclass(frozen=True)
class WireLimits:
    """Caps applied while decoding; they bound memory and time spent on hostile input."""

    max_bytes: int = 64 * 2**20  # one payload
    max_depth: int = 8
    max_items: int = 4096  # list/dict entries and array count in one value
    max_ndim: int = 8
    max_dim: int = 2**24
    max_str: int = 64 * 1024


# --------------------------------------------------------------------------- encoding


def encode(value: object) -> bytes:
    """Encode a value tree; raises WireError for types outside the format."""
    out: list[bytes] = []
    _encode(value, out, depth=0)
    return b"".join(out)


def _encode(value: object, out: list[bytes], depth: int) -> None:
    if depth > 16:
        raise WireError("value nested too deeply")
    if value is None:
        out.append(b"N")
    elif value is True or value is False:
        out.append(b"T" if value else b"F")
    elif isinstance(value, np.ndarray):
        _encode_array(value, out)
    elif isinstance(value, np.generic):
        _encode_array(np.asarray(value), out)
    elif type(value) is int:
        if not -(2**63) <= value < 2**63:
            raise WireError("integer out of int64 range")
        out.append(b"i" + struct.pack("<q", value))
    elif type(value) is float:
        out.append(b"f" + struct.pack("<d", value))
    elif type(value) is str:
        data = value.encode("utf-8", "surrogatepass")
        out.append(b"s" + struct.pack("<I", len(data)) + data)
    elif type(value) in (list, tuple):
        out.append(b"l" + struct.pack("<I", len(value)))
        for item in value:
            _encode(item, out, depth + 1)
    elif type(value) is dict:
        out.append(b"d" + struct.pack("<I", len(value)))
        for key in value:
            if type(key) is not str:
                raise WireError("dict keys must be str")
            _encode(key, out, depth + 1)
            _encode(value[key], out, depth + 1)
    else:
        raise WireError(f"cannot send a value of type {type(value).__name__}")


def _encode_array(arr: np.ndarray, out: list[bytes]) -> None:
    dtype = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
    code = _CODES.get(dtype)
    if code is None:
        raise WireError(f"arrays of dtype {arr.dtype} are not supported")
    data = np.ascontiguousarray(arr, dtype=DTYPES[code]).tobytes()
    header = struct.pack("<BB", code, arr.ndim) + struct.pack(f"<{arr.ndim}Q", *arr.shape)
    out.append(b"a" + header + struct.pack("<Q", len(data)) + data)


def frame(kind: int, case: int, payload: bytes = b"") -> bytes:
    return FRAME_HEADER.pack(MAGIC, kind, case, len(payload)) + payload


# --------------------------------------------------------------------------- decoding


def decode(data: bytes, limits: WireLimits = WireLimits()) -> object:
    """Decode one value; every length and count is checked before anything is allocated."""
    if len(data) > limits.max_bytes:
        raise WireError("payload too large")
    reader = _Reader(memoryview(data), limits)
    value = reader.value(depth=0)
    if reader.pos != len(data):
        raise WireError("trailing bytes after value")
    return value


class _Reader:
    def __init__(self, view: memoryview, limits: WireLimits) -> None:
        self.view, self.limits, self.pos, self.items = view, limits, 0, 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.view):
            raise WireError("truncated value")
        chunk = self.view[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> tuple:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))

    def count(self, n: int) -> int:
        self.items += n
        if self.items > self.limits.max_items:
            raise WireError("too many items")
        return n

    def value(self, depth: int) -> object:
        if depth > self.limits.max_depth:
            raise WireError("value nested too deeply")
        tag = bytes(self.take(1))
        if tag == b"N":
            return None
        if tag in (b"T", b"F"):
            return tag == b"T"
        if tag == b"i":
            return self.unpack("<q")[0]
        if tag == b"f":
            return self.unpack("<d")[0]
        if tag == b"s":
            return self.string()
        if tag == b"a":
            return self.array()
        if tag == b"l":
            n = self.count(self.unpack("<I")[0])
            return [self.value(depth + 1) for _ in range(n)]
        if tag == b"d":
            return self.mapping(depth)
        raise WireError(f"unknown tag {tag!r}")

    def string(self) -> str:
        (n,) = self.unpack("<I")
        if n > self.limits.max_str:
            raise WireError("string too long")
        try:
            return bytes(self.take(n)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError("string is not UTF-8") from exc

    def mapping(self, depth: int) -> dict:
        n = self.count(self.unpack("<I")[0])
        result: dict[str, object] = {}
        for _ in range(n):
            if bytes(self.take(1)) != b"s":
                raise WireError("dict key is not a string")
            key = self.string()
            if key in result:
                raise WireError(f"duplicate dict key {key!r}")
            result[key] = self.value(depth + 1)
        return result

    def array(self) -> np.ndarray:
        self.count(1)
        code, ndim = self.unpack("<BB")
        if code not in DTYPES:
            raise WireError(f"unknown dtype code {code}")
        if ndim > self.limits.max_ndim:
            raise WireError(f"array has {ndim} dimensions (limit {self.limits.max_ndim})")
        shape = self.unpack(f"<{ndim}Q") if ndim else ()
        if any(d > self.limits.max_dim for d in shape):
            raise WireError("array dimension too large")
        # numpy multiplies the non-zero dimensions even of an empty array and refuses a product that
        # overflows, so an empty array of shape (0, 2**24, ..., 2**24) is bounded here, not by its bytes.
        if math.prod(d for d in shape if d) * DTYPES[code].itemsize > self.limits.max_bytes:
            raise WireError(f"array shape {shape} is too large")
        (nbytes,) = self.unpack("<Q")
        expected = math.prod(shape) * DTYPES[code].itemsize
        if nbytes != expected:
            raise WireError(f"array byte count {nbytes} does not match shape {shape}")
        raw = self.take(nbytes)
        # frombuffer + copy: an owned, writeable array whose bytes came from nowhere but the wire.
        return np.frombuffer(raw, dtype=DTYPES[code]).reshape(shape).copy()


TOO_LARGE = 255  # not sent by anyone: FrameReader reports a skipped over-size RESULT with this kind


class FrameReader:
    """Incremental frame parser for a byte stream that arrives in arbitrary chunks.

    Memory stays bounded whatever the child sends: a RESULT frame larger than ``max_result`` bytes,
    or one that would take the results kept so far past ``max_total``, is skipped as it streams in
    and reported as a ``TOO_LARGE`` frame (payload: JSON with its size and the limit it broke), so
    that one test becomes a bad output and the rest still run. Any other frame above
    ``max_payload`` is a protocol violation (WireError).
    """

    def __init__(self, max_payload: int, max_total: int, max_result: int | None = None) -> None:
        self.buffer = bytearray()
        self.max_payload, self.max_total = max_payload, max_total
        self.max_result = max_payload if max_result is None else max_result
        self.kept = 0  # RESULT payload bytes accepted
        self.skipping, self.skipped = 0, (0, 0, "")  # bytes still to drop; (case, size, limit) of that frame

    def feed(self, chunk: bytes) -> list[tuple[int, int, bytes]]:
        """Append bytes and return the complete frames; raises WireError on a malformed stream."""
        self.buffer += chunk
        frames = []
        while True:
            if self.skipping:
                dropped = min(self.skipping, len(self.buffer))
                del self.buffer[:dropped]
                self.skipping -= dropped
                if self.skipping:
                    break
                case, size, limit = self.skipped
                frames.append((TOO_LARGE, case, json.dumps({"bytes": size, "limit": limit}).encode()))
            if len(self.buffer) < FRAME_HEADER.size:
                break
            magic, kind, case, length = FRAME_HEADER.unpack_from(self.buffer)
            if magic != MAGIC or kind not in FRAME_KINDS:
                raise WireError("malformed frame header")
            if kind == RESULT and (length > self.max_result or self.kept + length > self.max_total):
                limit = "test" if length > self.max_result else "run"
                del self.buffer[: FRAME_HEADER.size]
                self.skipping, self.skipped = length, (case, length, limit)
                continue
            if kind != RESULT and length > self.max_payload:
                raise WireError("frame payload too large")
            end = FRAME_HEADER.size + length
            if len(self.buffer) < end:
                break
            self.kept += length if kind == RESULT else 0
            frames.append((kind, case, bytes(self.buffer[FRAME_HEADER.size : end])))
            del self.buffer[:end]
        return frames

    @property
    def pending(self) -> int:
        return len(self.buffer)
