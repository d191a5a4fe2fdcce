"""Compile LaTeX to PDF with pdflatex, safely and reproducibly, or say how to install it.

The compile runs in a private temporary directory (nothing but the PDF comes back), with
``-no-shell-escape`` and ``-halt-on-error`` so a template can neither run programs nor hang on a
prompt. ``SOURCE_DATE_EPOCH`` pins the dates and document id pdfTeX writes, so the same ``.tex``
gives the same PDF bytes. pdflatex runs a second time only when the log asks for a rerun.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from problemgen.errors import WriteFailed
from problemgen.model.core import ProblemgenError

INSTALL_HINT = (
    "pdflatex was not found, so no PDF can be made (the .tex files are still written with --format tex). "
    "Install TeX Live: on Debian/Ubuntu `apt-get install texlive-latex-base texlive-latex-recommended`, "
    "on macOS MacTeX or `brew install --cask basictex`, elsewhere https://tug.org/texlive/"
)
MAX_RUNS = 3
TIMEOUT_SECONDS = 120


def pdflatex_path() -> str | None:
    """The pdflatex executable on PATH, or None."""
    return shutil.which("pdflatex")


def _first_error(log: str) -> str:
    """The first ``! …`` error of a TeX log with the line it points at, as one line."""
    lines = log.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("!"):
            context = next((l.strip() for l in lines[number + 1 : number + 6] if l.startswith("l.")), "")
            return f"{line[1:].strip()} {context}".strip()
    return "see the log (no '!' error line found)"


def _environment() -> dict[str, str]:
    r"""Reproducible dates, and kpathsea's paranoid file mode for reading and writing.

    ``openin_any=p`` / ``openout_any=p``: no absolute paths, no ``..``, no dot-files, so text that
    slipped into a document cannot read ``/etc/passwd`` or write outside the build directory;
    ``shell_escape=f`` (with ``-no-shell-escape``) keeps ``\write18`` from running commands.
    """
    env = dict(os.environ)
    env.update({"SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1", "openin_any": "p", "openout_any": "p",
                "shell_escape": "f"})  # fmt: skip
    return env


@dataclass(frozen=True)
class Overfull:
    """A line pdflatex could not fit: how far it sticks into the margin, and where in the source."""

    points: float
    first_line: int
    last_line: int


_OVERFULL = re.compile(r"^Overfull \\hbox \(([0-9.]+)pt too wide\) (?:in paragraph|detected) at lines? (\d+)(?:--(\d+))?", re.M)


def overfull_boxes(log: str) -> list[Overfull]:
    """Every overfull line a TeX log reports (lines running into the right margin), in log order."""
    return [
        Overfull(float(points), int(first), int(last or first)) for points, first, last in _OVERFULL.findall(log)
    ]


def compile_pdf(tex_source: str, name: str = "document") -> bytes:
    """Compile ``tex_source`` and return the PDF bytes; a ProblemgenError names the first TeX error."""
    return compile_with_log(tex_source, name)[0]


def compile_with_log(tex_source: str, name: str = "document") -> tuple[bytes, str]:
    """(PDF bytes, the log of the last pdflatex run): the log tells layout checks which lines overflow."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ProblemgenError(f"invalid document name {name!r}")
    executable = pdflatex_path()
    if executable is None:
        raise ProblemgenError(INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="problemgen-tex-") as tmp:
        source = Path(tmp) / f"{name}.tex"
        try:
            source.write_text(tex_source, encoding="utf-8")
        except OSError as exc:  # the temporary folder's disk is full: no traceback, and exit 4 as any output
            raise WriteFailed(f"cannot write {name}.tex for pdflatex in {tmp} ({exc.strerror})") from None
        command = [executable, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", source.name]
        for _ in range(MAX_RUNS):
            try:
                run = subprocess.run(
                    command, cwd=tmp, env=_environment(), stdin=subprocess.DEVNULL,
                    capture_output=True, timeout=TIMEOUT_SECONDS, check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise ProblemgenError(f"pdflatex took longer than {TIMEOUT_SECONDS} s on {name}.tex") from exc
            log_path = Path(tmp) / f"{name}.log"
            log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
            if run.returncode != 0:
                raise ProblemgenError(f"pdflatex failed on {name}.tex: {_first_error(log)}")
            if "Rerun to get" not in log:
                break
        return (Path(tmp) / f"{name}.pdf").read_bytes(), log
