"""Pack the running problemgen into a wheel, so a platform installs exactly the code that exported.

Gradescope's ``setup.sh`` and the GitHub workflow install problemgen from this wheel (its dependencies
— numpy, sympy, click, jinja2 — come from PyPI when the platform builds its image; nothing is
downloaded while grading). The wheel is written here rather than by ``pip wheel`` because the running
problemgen may be a source checkout (tests, development) or an installed distribution, and a pure-Python
wheel is only a zip with three metadata files: building it needs no network, no ``wheel`` package and
no build isolation, and the same code gives the same bytes.

- From a checkout (``pyproject.toml`` next to the ``problemgen`` package): the packages, package
  directories and package data that ``pyproject.toml`` declares, as setuptools would install them,
  and its ``script-files`` (the ``problemgen`` command) under ``.data/scripts/`` with the ``#!python``
  line pip rewrites to the installing interpreter.
- From an installed distribution: the files its ``RECORD`` lists (byte code and install markers left
  out), the command taken back from the scripts directory with its ``#!python`` line restored.

A wheel that sits where students can read it (a GitHub Classroom repository) leaves out the coding
tasks' shipped solutions and mutants (:data:`STUDENT_VISIBLE_LEFT_OUT`); the export seals the solutions,
which the code grader needs, and puts them back at grading time.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import problemgen
from problemgen.errors import ProblemgenError
from problemgen.exports.bundle import ZIP_DATE
from problemgen.userfiles import read_capped

WHEEL_TEXT = "Wheel-Version: 1.0\nGenerator: problemgen.exports.wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
SOLUTIONS = "problemgen/code/tasks/solutions/"
MAX_WHEEL_BYTES = 64 * 1024 * 1024
"""Largest ``--wheel`` read: problemgen's own wheel is under a megabyte."""
STUDENT_VISIBLE_LEFT_OUT = (SOLUTIONS, "problemgen/code/tasks/mutants.py")
"""Paths (prefixes) left out of a wheel students can read: the tasks' solutions and the mutants made from them."""
_SKIP_INSTALLED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "WHEEL"}


@dataclass(frozen=True)
class Wheel:
    filename: str
    data: bytes


def build_wheel(left_out: tuple[str, ...] = ()) -> Wheel:
    """A wheel of the running problemgen (checkout or installed distribution), without the ``left_out`` paths."""
    name, version, files = running_files()
    files = {path: data for path, data in files.items() if not path.startswith(left_out)}
    return Wheel(f"{name}-{version}-py3-none-any.whl", _pack(name, version, files))


def running_files() -> tuple[str, str, dict[str, bytes]]:
    """(name, version, {path in the wheel: bytes}) of the running problemgen."""
    checkout = Path(problemgen.__file__).resolve().parents[1]
    return _checkout_files(checkout) if _is_checkout(checkout) else _installed_files()


def _is_checkout(root: Path) -> bool:
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return False
    return _read_pyproject(pyproject).get("project", {}).get("name") == "problemgen"


def _read_pyproject(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProblemgenError(f"{path}: cannot read ({exc})") from exc


# ------------------------------------------------------------------------------------------ checkout


def _checkout_files(root: Path) -> tuple[str, str, dict[str, bytes]]:
    config = _read_pyproject(root / "pyproject.toml")
    project, tool = config["project"], config.get("tool", {}).get("setuptools", {})
    package_dirs, package_data = tool.get("package-dir", {}), tool.get("package-data", {})
    files: dict[str, bytes] = {}
    for package in tool.get("packages", []):
        source = root / package_dirs.get(package, package.replace(".", "/"))
        target = package.replace(".", "/")
        for path in sorted(source.glob("*.py")):
            files[f"{target}/{path.name}"] = path.read_bytes()
        for pattern in package_data.get(package, []):
            for path in sorted(source.glob(pattern)):
                if path.is_file() and "__pycache__" not in path.parts:
                    files[f"{target}/{path.relative_to(source).as_posix()}"] = path.read_bytes()
    for script in tool.get("script-files", []):
        files[_script_path(project["name"], project["version"], Path(script).name)] = _portable_script(
            (root / script).read_bytes())
    dist_info = f"{project['name']}-{project['version']}.dist-info"
    files[f"{dist_info}/METADATA"] = _metadata(project, root).encode("utf-8")
    scripts = project.get("scripts", {})
    if scripts:
        lines = ["[console_scripts]", *(f"{k} = {v}" for k, v in sorted(scripts.items()))]
        files[f"{dist_info}/entry_points.txt"] = ("\n".join(lines) + "\n").encode("utf-8")
    return project["name"], project["version"], files


def _metadata(project: dict, root: Path) -> str:
    """Core metadata 2.1 from ``[project]`` (the fields pip reads to install and resolve)."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    if isinstance(project.get("license"), dict) and project["license"].get("text"):
        lines.append(f"License: {project['license']['text']}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ installed


def _installed_files() -> tuple[str, str, dict[str, bytes]]:
    try:
        dist = importlib.metadata.distribution("problemgen")
    except importlib.metadata.PackageNotFoundError:
        raise ProblemgenError("cannot find problemgen's sources or its installed distribution to pack") from None
    files: dict[str, bytes] = {}
    for entry in dist.files or []:
        parts = entry.parts
        if _is_installed_script(entry):
            data = _portable_script(Path(dist.locate_file(entry)).read_bytes())
            files[_script_path(dist.metadata["Name"], dist.version, parts[-1])] = data
            continue
        if parts[0] in ("..", "/") or "__pycache__" in parts or entry.suffix == ".pyc":
            continue
        if parts[0].endswith(".dist-info") and parts[-1] in _SKIP_INSTALLED:
            continue
        files["/".join(parts)] = Path(dist.locate_file(entry)).read_bytes()
    if "problemgen/__init__.py" not in files:
        raise ProblemgenError("the installed problemgen lists no package files (an editable install?); "
                              "export from its source checkout instead")
    return dist.metadata["Name"], dist.version, files


def _is_installed_script(entry) -> bool:
    """Whether a RECORD entry is the ``problemgen`` command installed into the environment's scripts directory."""
    return entry.parts[0] == ".." and entry.parts[-1] == "problemgen" and entry.parts[-2] in ("bin", "Scripts")


# ------------------------------------------------------------------------------------------ scripts


def _script_path(name: str, version: str, script: str) -> str:
    return f"{name}-{version}.data/scripts/{script}"


def _portable_script(data: bytes) -> bytes:
    """The script with its first line ``#!python``, which pip rewrites to the interpreter installing the wheel."""
    first, _, rest = data.partition(b"\n")
    return b"#!python\n" + rest if first.startswith(b"#!") else data


# ------------------------------------------------------------------------------------------ packing


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _pack(name: str, version: str, files: dict[str, bytes]) -> bytes:
    """The wheel zip: files sorted, WHEEL and RECORD added, fixed timestamps."""
    import io

    dist_info = f"{name}-{version}.dist-info"
    files = {**files, f"{dist_info}/WHEEL": WHEEL_TEXT.encode()}
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in sorted(files.items())]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, ZIP_DATE)
            info.external_attr = (0o100755 if ".data/scripts/" in path else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[path])
    return buffer.getvalue()


def read_wheel(path: str | Path) -> Wheel:
    """A wheel given by the user (``--wheel``): checked to be a problemgen wheel, used as it is."""
    path = Path(path)
    if not (path.name.startswith("problemgen-") and path.name.endswith(".whl")):
        raise ProblemgenError(f"{path}: expected a problemgen-<version>-….whl file")
    data = read_capped(path, MAX_WHEEL_BYTES, "wheel")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:  # the bytes shipped are the bytes checked
            if "problemgen/__init__.py" not in archive.namelist():
                raise ProblemgenError(f"{path}: this wheel holds no problemgen package")
    except (OSError, zipfile.BadZipFile) as exc:
        raise ProblemgenError(f"{path}: not a readable wheel ({exc})") from exc
    return Wheel(path.name, data)
