"""Copy a submission into a private directory that holds nothing but its own ``.py`` sources.

Why so strict: Python runs code it finds next to the program (``sitecustomize.py``, ``.pth`` files,
a module named ``numpy.py`` that shadows the real one, stale ``.pyc`` files that do not match their
source, ``conftest.py`` for pytest users). The child imports only from this directory, so whatever
is not copied here cannot run.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
MAX_FILES = 32
FORBIDDEN_FILES = {"conftest.py", "sitecustomize.py", "usercustomize.py", "__init__.py", "__main__.py"}
FORBIDDEN_SUFFIXES = (".pyc", ".pyo", ".pth", ".so", ".pyd", ".dylib", ".dll")
# Importable names a submission's modules may not take over.
RESERVED = set(sys.stdlib_module_names) | {
    "numpy", "sympy", "mpmath", "scipy", "torch", "problemgen", "reference", "pytest",
    "hypothesis", "click", "jinja2", "site", "typing_extensions", "_distutils_hack", "setuptools", "pip",
}  # fmt: skip


class RejectedSubmission(ValueError):
    """The file set itself is not acceptable; the message says which file and why."""


@dataclass(frozen=True)
class StagedSubmission:
    """A private directory ready for the child; remove it with :meth:`cleanup`."""

    directory: str
    entry: str  # file name of the module whose functions are called
    files: tuple[str, ...]
    sources: dict  # file name -> source text (for the static checks run by the grader)
    enclosure: str = ""  # the unlistable folder around ``directory`` (see :func:`stage`), removed with it

    def cleanup(self) -> None:
        shutil.rmtree(self.enclosure or self.directory, ignore_errors=True)


def collect(path: str | os.PathLike, entry_names: tuple[str, ...] = ()) -> tuple[dict[str, str], str]:
    """Read and validate the sources of a submission (one ``.py`` file or a flat directory).

    Returns (file name -> source, entry file name). Raises RejectedSubmission with a clear reason.
    Only ``.py`` files are taken from a directory; other harmless files (notes, data) are ignored,
    sub-directories are never entered, symbolic links are refused.
    """
    path = Path(path)
    if path.is_symlink():
        raise RejectedSubmission(f"{path.name}: symbolic links are not accepted")
    if path.is_file():
        if path.suffix != ".py":
            raise RejectedSubmission(f"{path.name}: a submission must be a .py file or a directory")
        try:
            name = module_file_name(path.name)
        except RejectedSubmission:
            name = "submission.py"  # a lone file's own name does not matter; do not reject it for that
        return {name: _read(path)}, name
    if not path.is_dir():
        raise RejectedSubmission(f"{path}: {_not_a_submission(path)}")
    sources: dict[str, str] = {}
    for item in sorted(path.iterdir()):
        if item.name.endswith(FORBIDDEN_SUFFIXES):
            raise RejectedSubmission(f"{item.name}: compiled or path-configuration files are not accepted")
        if item.suffix != ".py" or item.is_dir() or item.name.startswith("._"):
            continue  # ._name.py: the metadata macOS writes beside name.py when it zips or copies a folder
        if item.is_symlink():
            raise RejectedSubmission(f"{item.name}: symbolic links are not accepted")
        sources[module_file_name(item.name)] = _read(item)
    if not sources:
        raise RejectedSubmission(f"{path.name}: the directory holds no .py file")
    if len(sources) > MAX_FILES:
        raise RejectedSubmission(f"{path.name}: more than {MAX_FILES} .py files")
    if sum(len(s) for s in sources.values()) > MAX_TOTAL_BYTES:
        raise RejectedSubmission(f"{path.name}: the sources exceed {MAX_TOTAL_BYTES} bytes in total")
    return sources, _entry(sources, entry_names, path.name)


def module_file_name(name: str) -> str:
    stem = name[:-3]
    if name in FORBIDDEN_FILES:
        raise RejectedSubmission(f"{name}: this file name is not accepted in a submission")
    if not stem.isidentifier() or not stem.isascii():
        raise RejectedSubmission(f"{name}: not an importable module name (use letters, digits, _)")
    if stem in RESERVED or stem.split(".")[0] in RESERVED:
        raise RejectedSubmission(f"{name}: the name shadows the installed module {stem!r}; rename the file")
    return name


def _not_a_submission(path: Path) -> str:
    """Why ``path``, neither a regular file nor a directory, is no submission: it is missing, or what it is."""
    from problemgen.userfiles import kind_of  # here: the sandbox's child imports this module and needs none of that

    try:
        return f"is {kind_of(path.lstat().st_mode)}, not a regular file or a directory"
    except OSError:
        return "no such file or directory"


def _read(path: Path) -> str:
    """The file's text. A UTF-8 byte-order mark (what some Windows editors save) is dropped: Python runs
    such a file, and kept, the mark made the checks see a stray character and refuse a right answer.

    Read by ``userfiles.read_regular``: a FIFO, socket or device named ``x.py`` in a student's folder is
    refused (it once blocked, or read ``/dev/zero`` without end, stopping the whole class run), and so is a
    file that cannot be read (mode 000 under a grader that is not root), as this student's rejection."""
    from problemgen.userfiles import Refused, TooLarge, read_regular  # here: see _not_a_submission

    try:
        data = read_regular(path, MAX_FILE_BYTES, follow_symlinks=False)
    except TooLarge:
        raise RejectedSubmission(f"{path.name}: larger than {MAX_FILE_BYTES} bytes") from None
    except Refused as exc:
        raise RejectedSubmission(f"{path.name}: {exc}") from None
    except OSError as exc:
        raise RejectedSubmission(f"{path.name}: cannot be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RejectedSubmission(f"{path.name}: not UTF-8 text (byte {exc.start})") from exc


def _entry(sources: dict[str, str], entry_names: tuple[str, ...], where: str) -> str:
    for name in (*entry_names, "submission.py", "solution.py"):
        if name in sources:
            return name
    if len(sources) == 1:
        return next(iter(sources))
    wanted = ", ".join((*entry_names, "submission.py"))
    raise RejectedSubmission(f"{where}: several .py files and none is named {wanted}")


RAM_DIRECTORY = "/dev/shm"


def staging_parent() -> str | None:
    """Where submissions are staged: ``$TMPDIR`` when the user names one, else the RAM filesystem
    ``/dev/shm`` when the machine has it, else the system's temporary directory (None).

    Why RAM: a staged submission lives for one run, and creating its directory and file is most of
    staging's cost on some disks (up to a millisecond of kernel time per new inode on the ext4 of the
    virtual machines this was measured on, a few microseconds on tmpfs).
    """
    if os.environ.get("TMPDIR"):
        return None
    if os.path.isdir(RAM_DIRECTORY) and os.access(RAM_DIRECTORY, os.W_OK | os.X_OK):
        return RAM_DIRECTORY
    return None


def stage(sources: dict[str, str], entry: str) -> StagedSubmission:
    """Write the sources into a fresh private directory, read-only, readable by the child.

    The directory (a random name) lies in an enclosure of its own that others may pass through but not
    list (mode 0711). Every child of a root grader runs as ``nobody``, those of this run's other workers and
    of other graders on the host alike; where Landlock does not confine reading, a child could list the
    staging place and read, or import, another student's staged code (an honest classmate's answer). It
    can still open a path it knows, and it knows only its own."""
    enclosure = tempfile.mkdtemp(prefix="problemgen-", dir=staging_parent())
    try:
        os.chmod(enclosure, stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH)
        directory = tempfile.mkdtemp(prefix="sub-", dir=enclosure)
    except OSError:
        shutil.rmtree(enclosure, ignore_errors=True)
        raise
    try:
        for name, text in sorted(sources.items()):
            target = os.path.join(directory, name)
            try:
                with open(target, "x", encoding="utf-8") as handle:
                    handle.write(text)
            except OSError as exc:
                raise _unwritten(exc, name, os.path.dirname(enclosure)) from None
            os.chmod(target, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        # The child may run as 'nobody': it must be able to list and read, never write.
        os.chmod(directory, 0o755)
    except BaseException:  # the OSError of a chmod, the WriteFailed of a write, a Ctrl-C: nothing is left behind
        shutil.rmtree(enclosure, ignore_errors=True)
        raise
    return StagedSubmission(directory, entry, tuple(sorted(sources)), dict(sources), enclosure)


def _unwritten(exc: OSError, name: str, place: str) -> OSError:
    """A source that could not be staged, as an error naming the staging place (the write's own error names
    no file): a full ``/dev/shm`` or ``$TMPDIR`` is the run's failure (exit 4, as any output that cannot be
    written), once said as if the standard output had been cut short."""
    from problemgen.errors import WriteFailed  # here: see _not_a_submission

    return WriteFailed(f"cannot write {name} in {place}, where submissions are staged to run ({exc.strerror}); "
                       "make room there, or set TMPDIR to a folder with room")
