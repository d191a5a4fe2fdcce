"""The files of an export, written as a zip or into a directory: same inputs, same bytes.

An export is built in memory as a :class:`Bundle` (relative path -> bytes, executable or not) and then
written once. Zips get sorted entries, a fixed 1980-01-01 timestamp and explicit Unix modes, so an
instructor can diff two exports and a re-export of the same class gives an identical file.
Nothing is written outside the path the user named; a non-empty output directory is refused unless
``force``. Then the bundle's own files are replaced, all together once every one is written (a full disk
leaves an earlier export whole), and then the files an earlier export
left there that this one did not write are removed: those matching the export's ``owned`` patterns (names
only an export of that platform gives, such as a wheel of another version, which would be installed beside
this one). Nothing else there is touched.
"""

from __future__ import annotations

import glob
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from problemgen.errors import ProblemgenError, WriteFailed
from problemgen.outputlock import holding
from problemgen.outputs import allowed_mode, make_folder, remove_leftovers, remove_stale
from problemgen.safewrite import Staged, out_of_room, reason, replacing

ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass
class Bundle:
    """Files by relative POSIX path; ``executable`` holds the paths that get mode 0755."""

    files: dict[str, bytes] = field(default_factory=dict)
    executable: set[str] = field(default_factory=set)

    def add(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        if path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"bundle paths are relative and stay inside: {path!r}")
        self.files[path] = data.encode("utf-8") if isinstance(data, str) else data
        if executable:
            self.executable.add(path)

    def add_json(self, path: str, data: object) -> None:
        self.add(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")

    def mode(self, path: str) -> int:
        return 0o755 if path in self.executable else 0o644


def write_zip(bundle: Bundle, target: str | Path) -> Path:
    """Write the bundle as a deterministic zip at ``target`` (an existing file of that name is replaced)."""
    target = Path(target)
    if target.is_dir():
        raise ProblemgenError(f"{target}: is a directory; name the .zip file to write")
    if not target.parent.is_dir():
        raise ProblemgenError(f"{target.parent}: directory not found")
    with replacing(target, text=False, durable=True) as stream:  # a full disk keeps the earlier zip whole
        with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(bundle.files):
                info = zipfile.ZipInfo(path, ZIP_DATE)
                info.external_attr = (0o100000 | bundle.mode(path)) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3  # Unix, so the modes above are honoured when unpacked
                archive.writestr(info, bundle.files[path])
    return target


def write_directory(bundle: Bundle, target: str | Path, *, force: bool = False,
                    owned: tuple[str, ...] = ()) -> list[str]:
    """Write the bundle under ``target`` (a non-empty directory is refused unless ``force``), then remove
    the files matching ``owned`` that the bundle does not hold; returns a warning line for each."""
    root = Path(target)
    if root.exists() and not root.is_dir():
        raise ProblemgenError(f"{root}: exists and is not a directory")
    try:
        make_folder(root)
    except OSError as exc:
        raise _failure(exc)(f"{root}: cannot write the export ({reason(exc, root)})") from None
    with holding(root, writing=True):  # a second export into it stops at once (problemgen.outputlock)
        if any(root.iterdir()) and not force:  # looked at once held: another export may have just ended
            raise ProblemgenError(f"{root}: directory is not empty; use --force to replace the files the export writes")
        remove_leftovers(root, [*map(glob.escape, bundle.files), *owned])  # a killed export's, never shipped
        _write_files(bundle, root)
        removal = remove_stale(root, owned, bundle.files)
    return [*(f"removed {path}, left by an earlier export: this export does not write it" for path in removal.removed),
            *removal.failed]


def _write_files(bundle: Bundle, root: Path) -> None:
    """Every file staged first, then all put in place together: a full disk replaces none."""
    with Staged(durable=True) as staged:
        try:
            resolved = root.resolve()
            for path in sorted(bundle.files):
                file = root / path
                make_folder(file.parent)  # .github/workflows: .github too is never writable by others
                if file.is_symlink() or not file.parent.resolve().is_relative_to(resolved):
                    raise ProblemgenError(f"refusing to write {file}: it is a link or leads outside {root}")
                staged.add(file, bundle.files[path], mode=allowed_mode(bundle.mode(path)))  # 0o600 under umask 077
        except OSError as exc:
            raise WriteFailed(f"{root}: cannot write the export ({reason(exc, root)})") from None
        except WriteFailed as exc:
            raise WriteFailed(f"{exc}; no file of the export in {root} was replaced") from None
        staged.commit()


def _failure(exc: OSError) -> type[ProblemgenError]:
    """Creating the output folder: a full disk or quota is the run's failure (exit 4); a path through a
    file, or a place the user may not write, is the user's input (exit 2), as for the other output folders."""
    return WriteFailed if out_of_room(exc) else ProblemgenError


def unpack_zip(archive: str | Path, target: str | Path) -> None:
    """Unpack an export zip keeping its modes, as the platforms do (used by tests and local trials)."""
    target = Path(target)
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            path = target / info.filename
            if not path.resolve().is_relative_to(target.resolve()):
                raise ProblemgenError(f"{info.filename}: leads outside {target}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(zipped.read(info))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                path.chmod(mode)
