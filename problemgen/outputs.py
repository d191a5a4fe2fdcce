"""Where a command writes: never over or inside what it reads, only where it can, and, run again into an
earlier run's folder, leaving no file of that run behind.

Before anything is written (:func:`check_output_apart`, :func:`check_output_file`): an output that is one of
the command's inputs, or lies inside an input folder, is refused (written over its input, a run loses what
it read; inside the submissions, the next run takes the gradebook for entries), and so is an output file
that cannot be written (a folder, a missing parent); each is one line naming the option, before any work.

A run into the folder of an earlier run. Instructors run a command again into the same output: a class set regenerated after a roster change, a
regrade after late submissions, an export rebuilt after an upgrade. Files of the same names are replaced,
but a file the earlier run wrote and this one did not would stay beside the new ones and describe the
earlier run (the handout of a student since withdrawn, a worksheet.pdf of last week's variant, a second
wheel that stops a grader from starting). Each command knows the names it may write, as glob patterns
relative to its output folder that match its own outputs exactly (never a bare ``*``), so nothing a user
put there under another name matches. Once every new file is written (a run that fails earlier loses
nothing), :func:`remove_stale` removes the matching files this run did not write; the command names
each in a warning.

A run killed midway (SIGKILL, a lost machine) may leave the hidden temporaries of :mod:`problemgen.safewrite`
(``.key.toml.1a2b3c4d.partial``) beside its outputs. No output pattern matches them, so they are never
graded or counted, but an export folder would ship them and nothing else removes them: a run that holds
the folder (:mod:`problemgen.outputlock`, so no other run is writing them) removes those whose final name is
one of its own patterns, before it writes (:func:`remove_leftovers`), silently, since each is an
unfinished copy of a file the run writes again.

Links are never followed: a folder or file that is a symbolic link is not ours, and a link could lead
outside the folder the user named.

Permissions. Who may *read* an output is the user's umask (022: everyone; 077: only the user, which is
still enough to zip or upload handouts); a file that exists already keeps its mode when it is replaced,
so a key made private stays private. A class set (``worksheet``) and an export folder are never group- or
world-*writable*, whatever the umask (``umask 000`` in a container): grading trusts ``variant.json`` and an
export's sealed keys, and a writable key, or a writable folder it can be swapped in, would let anyone who
can write there change the grade. :data:`FILE_MODE` and :data:`FOLDER_MODE` are what those are created
with; :func:`allowed_mode` is a mode an export sets explicitly (``run.sh`` executable) as the umask
allows it. Other outputs (reports, gradebooks, single files) are readable as the umask says and never
group- or world-writable either (:mod:`problemgen.safewrite`; their folders come from :func:`make_folder`):
a gradebook anyone can write is a grade anyone can change before it is uploaded.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.safewrite import final_name


FILE_MODE = 0o644
FOLDER_MODE = 0o755


def allowed_mode(mode: int) -> int:
    """``mode`` less what the umask takes away and less any write bit for group or others."""
    return mode & ~current_umask() & ~0o022


def current_umask() -> int:
    """The process's umask (read from ``/proc`` where it is shown; set and restored elsewhere)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_folder(path: str | Path) -> None:
    """Create the folder ``path`` and its missing parents with :data:`FOLDER_MODE` (as the umask allows), like
    ``mkdir -p``; one that exists is kept as it is.

    Why not ``Path.mkdir(parents=True)``: it gives the parents it creates the umask's mode, so under
    ``umask 000`` ``-o grades/hw1`` made a world-writable ``grades/`` in which anyone could replace ``hw1``."""
    path = Path(path)
    try:
        path.mkdir(FOLDER_MODE, exist_ok=True)
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_folder(path.parent)
        path.mkdir(FOLDER_MODE, exist_ok=True)


def no_temporary_folder(exc: OSError) -> str:
    """The one-line message for ``exc`` when it is Python's "No usable temporary directory", else ''.

    Why: with ``$TMPDIR`` unset, missing or read-only, ``tempfile`` tries ``/tmp``, ``/var/tmp``, ``/usr/tmp``
    and then the working directory; on a read-only root file system where only the output folder is
    mounted writable none may be, and its FileNotFoundError came out of ``grade-code`` (the fork server,
    staging) and ``worksheet --format pdf`` as a traceback. The CLI asks this of an OSError no module
    foresaw; ``tempfile`` remembers a directory only once one worked, so asking again tells."""
    if not isinstance(exc, FileNotFoundError) or exc.filename is not None:
        return ""
    import tempfile  # lazy: only an error ends up here

    try:
        tempfile.gettempdir()
    except OSError:
        return ("no usable temporary directory: $TMPDIR, /tmp, /var/tmp, /usr/tmp and the working directory "
                "cannot be written; set TMPDIR to a writable folder")
    return ""


def check_output_apart(output: str | Path, inputs: Mapping[str, str | Path | None], option: str = "-o") -> None:
    """Refuse an output that is one of a command's inputs, or lies inside an input folder (``inputs``: what
    each input is -> its path; None for one not given), before anything is written.

    Written over its input, a run loses what it read (``grade a.toml --variant v.json -o a.toml`` replaced a
    student's sheet with its report); written inside the submissions, the next run takes the gradebook
    for entries; inside a class set, grades sit among what students are handed. Paths are compared
    resolved (``./a.toml``, a symbolic link) and, where both exist, as files (a hard link)."""
    out = Path(output).resolve()
    for role, given in inputs.items():
        if given is None:
            continue
        where = Path(given).resolve()
        if out == where or (out.exists() and where.exists() and os.path.samefile(out, where)):
            raise ProblemgenError(f"{option} {output}: is the {role} {given}; choose another output")
        if where.is_dir() and where in out.parents:
            raise ProblemgenError(f"{option} {output}: is inside the {role} {given}; choose an output outside it")


def check_output_file(output: str | Path, option: str = "-o") -> None:
    """Refuse an output file that cannot be written, before any work: a folder, a missing folder to put it
    in, or one the user may not write (the export, report or grades would be computed and then lost)."""
    path = Path(output)
    reason = ("it is a directory" if path.is_dir() else f"no directory {path.parent}" if not path.parent.is_dir()
              else why_unwritable(path if path.exists() else path.parent))
    if reason:
        raise ProblemgenError(f"{option} {output}: cannot be written ({reason})")


def why_unwritable(path: str | Path) -> str:
    """'' when this user may write ``path``, else why not in words: "read-only file system" (a container's
    read-only mount, where "permission denied" sent users to chmod) or "permission denied"."""
    if os.access(path, os.W_OK):
        return ""
    try:
        read_only = bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 0))
    except OSError:
        read_only = False
    return "read-only file system" if read_only else "permission denied"


def files_matching(root: str | Path, patterns: Iterable[str], *, leftovers: bool = False) -> set[str]:
    """Relative POSIX paths of the regular files under ``root`` that match one of ``patterns`` (``/``
    separates folders; each part is an ``fnmatch`` pattern). Links are neither listed nor followed.
    With ``leftovers``, the unfinished temporaries of such files instead (see the module's notes)."""
    found: set[str] = set()
    for pattern in patterns:
        found.update(_walk(Path(root), pattern.split("/"), (), leftovers))
    return found


def remove_leftovers(root: str | Path, patterns: Iterable[str]) -> None:
    """Remove the temporaries a killed run left for files matching ``patterns`` under ``root``, and the folders
    this empties; call it only while holding ``root`` (:mod:`problemgen.outputlock`). One that cannot be
    removed stays: it is hidden, and the run's own files are what matter."""
    remove_files(root, sorted(files_matching(root, patterns, leftovers=True)))


def _named(name: str, pattern: str, leftovers: bool) -> bool:
    """Whether a file ``name`` is one ``pattern`` names, or with ``leftovers`` a temporary of one."""
    if not leftovers:
        return fnmatch.fnmatchcase(name, pattern)
    final = final_name(name)
    return final is not None and fnmatch.fnmatchcase(final, pattern)


def _walk(root: Path, parts: list[str], inside: tuple[str, ...], leftovers: bool = False) -> Iterator[str]:
    folder = root.joinpath(*inside)
    try:
        with os.scandir(folder) as entries:
            listed = [(entry.name, entry.is_file(follow_symlinks=False), entry.is_dir(follow_symlinks=False))
                      for entry in entries]
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ProblemgenError(f"cannot list {folder} ({exc.strerror})") from None
    for name, is_file, is_dir in listed:
        if len(parts) == 1 and is_file and _named(name, parts[0], leftovers):
            yield "/".join((*inside, name))
        elif len(parts) > 1 and is_dir and fnmatch.fnmatchcase(name, parts[0]):
            yield from _walk(root, parts[1:], (*inside, name), leftovers)


@dataclass
class Removal:
    """What :func:`remove_stale` did: the paths it removed and one line for each it could not remove."""

    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def remove_stale(root: str | Path, patterns: Iterable[str], written: Iterable[str], shown_as: str = "") -> Removal:
    """Remove the files under ``root`` matching ``patterns`` that are not among ``written`` (relative
    paths of this run's files), then each folder below ``root`` that this leaves empty.

    Call it only once every file of the run is written. A match that is one of the written files under
    another name (a case-insensitive file system, a hard link) is kept. ``shown_as`` prefixes the paths
    in the failure lines (the folder ``root`` is to the user, e.g. ``reports/``).
    """
    return remove_files(root, stale_files(root, patterns, written), shown_as)


def stale_files(root: str | Path, patterns: Iterable[str], written: Iterable[str]) -> list[str]:
    """What :func:`remove_stale` would remove, sorted, removing nothing: a run whose last files say what
    it removed (a class summary) names them before it writes those files, and removes them after."""
    root, written = Path(root), set(written)
    stale = sorted(files_matching(root, patterns) - written)
    if not stale:
        return []
    ours = _identities(root, written)
    found = []
    for path in stale:
        try:
            if _identity(root / path) not in ours:
                found.append(path)
        except OSError:
            continue
    return found


def remove_files(root: str | Path, paths: Iterable[str], shown_as: str = "") -> Removal:
    """Remove ``paths`` (relative to ``root``, from :func:`stale_files`) and the folders this leaves empty."""
    root, removal = Path(root), Removal()
    for path in paths:
        try:
            (root / path).unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            removal.failed.append(
                f"{shown_as}{path} is left by an earlier run and could not be removed ({exc.strerror})")
            continue
        removal.removed.append(path)
    _remove_empty_folders(root, removal.removed)
    return removal


def _identity(path: Path) -> tuple[int, int]:
    status = path.lstat()
    return status.st_dev, status.st_ino


def _identities(root: Path, paths: set[str]) -> set[tuple[int, int]]:
    """(device, inode) of every written file: what must never be removed, whatever name it is found under."""
    found = set()
    for path in paths:
        try:
            found.add(_identity(root / path))
        except OSError:
            continue
    return found


def _remove_empty_folders(root: Path, removed: list[str]) -> None:
    """Remove the folders below ``root`` that held removed files and are empty now, deepest first."""
    folders = {parent for path in removed for parent in Path(path).parents if parent != Path(".")}
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        try:
            (root / folder).rmdir()
        except OSError:
            continue  # not empty (a user's file, a current output): it stays
