"""The commands in the processes CI runners, course autograders and containers actually start.

Each test runs the command line in a fresh interpreter with a controlled environment: a narrow output
encoding, a closed or broken standard stream, no home directory, a uid without a password entry, a loose
or strict umask, and a root grader that may not leave uid 0.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMGEN = [sys.executable, "-m", "problemgen"]
SECRET = "3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a"
ROSTER = "id,name,github\nana,Ána Žižek,ana-gh\nchen,陈伟,chen-gh\n"
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs a root test run")


def env(**extra: str) -> dict[str, str]:
    """A container's sparse environment: the checkout first on PYTHONPATH, a UTF-8 C locale, no colour."""
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", "NO_COLOR": "1",
            "HOME": os.environ.get("HOME", "/tmp"), "CLASS_SECRET": SECRET, "PROBLEMGEN_GRADER_SECRET": SECRET}
    base.update(extra)
    return {k: v for k, v in base.items() if v is not None}


def problemgen(*args: str, cwd: Path, environ: dict | None = None, **options) -> subprocess.CompletedProcess:
    if "stdout" not in options:
        options["capture_output"] = True
    return subprocess.run([*PROBLEMGEN, *args], cwd=cwd, env=environ or env(), timeout=120, **options)


def clean(run: subprocess.CompletedProcess) -> None:
    err = run.stderr.decode("utf-8", "replace") if isinstance(run.stderr, bytes) else run.stderr or ""
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]


def class_set(tmp_path: Path, name: str = "class", **options) -> Path:
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = tmp_path / name
    run = problemgen("worksheet", "masking", "-o", str(out), "--roster", "roster.csv", "--secret-env", "CLASS_SECRET",
                     cwd=tmp_path, **options)
    clean(run)
    assert run.returncode == 0, run.stderr
    return out


# --------------------------------------------------------------------------- standard streams


def test_a_latin1_terminal_gets_the_maths_spelled_in_ascii_rather_than_a_traceback(tmp_path):
    run = problemgen("show", "masks.causal", "--format", "text", "--solution", cwd=tmp_path,
                     environ=env(PYTHONIOENCODING="latin-1"))
    clean(run)
    assert run.returncode == 0
    text = run.stdout.decode("latin-1")
    assert "j <= i" in text and "≤" not in text


def test_a_latin1_terminal_gets_a_root_spelled_with_its_argument_as_the_quiz_spells_it(tmp_path):
    """``1/√dₖ`` came out as ``1/sqrtd_k`` from ``show``: the stream spelt one character at a time."""
    run = problemgen("show", "attention.weights", "--format", "text", "--solution", cwd=tmp_path,
                     environ=env(PYTHONIOENCODING="latin-1"))
    clean(run)
    text = run.stdout.decode("latin-1")
    assert "1/sqrt(d_k) = 1/" in text and "sqrtd" not in text


def test_a_closed_stdout_discards_the_output_and_the_quiz_still_ends_cleanly(tmp_path):
    run = problemgen("quiz", "--db", str(tmp_path / "p.sqlite3"), "--seed", "7", cwd=tmp_path,
                     input=b"solution\n\nquit\n", preexec_fn=lambda: os.close(1))
    clean(run)
    assert run.returncode == 0


def test_a_closed_stderr_still_writes_the_whole_class_set(tmp_path):
    """A cron job or daemon without fd 2: the progress and summary lines used to end the run with nothing written."""
    out = class_set(tmp_path, preexec_fn=lambda: os.close(2))
    assert (out / "manifest.json").is_file() and (out / "keys" / "chen" / "variant.json").is_file()


@pytest.mark.parametrize("args", [["show", "masks.causal"], ["--version"]], ids=["click", "fast-path"])
def test_a_reader_that_goes_away_ends_the_command_quietly_with_141(tmp_path, args):
    """``problemgen ... | head -1``: exit 1 would read as "a failure the command was asked to report"."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = problemgen(*args, cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    clean(run)
    assert run.returncode == 141 and run.stderr == b""


# --------------------------------------------------------------------------- home directory


def test_a_relative_home_is_ignored_for_the_progress_file(tmp_path):
    code = "from problemgen.practice.progress import default_db_path; print(default_db_path())"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env(HOME="relhome"), capture_output=True,
                         text=True, timeout=60)
    clean(run)
    assert Path(run.stdout.strip()).is_absolute(), run.stdout


NO_PASSWD_ENTRY = """
import os, sys
sys.path.insert(0, {root!r})
from problemgen.code.sandbox import runtimeview
runtimeview.expose([sys.prefix, sys.base_prefix])  # this machine's Python may live under a private /root
os.setgroups([]); os.setresgid(54321, 54321, 54321); os.setresuid(54321, 54321, 54321)
os.environ.pop("HOME", None)
if {xdg!r}:
    os.environ["XDG_DATA_HOME"] = {xdg!r}
from problemgen.cli import main
sys.argv = ["problemgen", *{argv!r}]
main()
"""


@AS_ROOT
@pytest.mark.parametrize("xdg", ["", "data"], ids=["nothing-set", "xdg-data-home"])
def test_a_uid_without_a_passwd_entry_and_no_home_gets_one_error_line_or_uses_xdg(shared_tmp, xdg):
    """GitHub Actions and OpenShift run arbitrary uids; Path.home() raised RuntimeError there."""
    import pwd

    with pytest.raises(KeyError):
        pwd.getpwuid(54321)
    xdg_path = str(shared_tmp / xdg) if xdg else ""
    script = NO_PASSWD_ENTRY.format(root=str(ROOT), xdg=xdg_path, argv=["progress"])
    run = subprocess.run([sys.executable, "-I", "-c", script], cwd=shared_tmp, env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)
    clean(run)
    if xdg:
        assert run.returncode == 0, run.stderr
        assert str(shared_tmp / "data" / "problemgen") in run.stdout
    else:
        assert run.returncode == 2
        assert run.stderr.startswith("error: no home directory") and "--db" in run.stderr, run.stderr


@AS_ROOT
def test_progress_in_a_folder_this_user_may_not_enter_is_one_error_line(shared_tmp):
    """``Path.exists`` raised PermissionError there; the quiz and the page already said it in one line."""
    private = shared_tmp / "private"
    private.mkdir(mode=0o700)
    script = NO_PASSWD_ENTRY.format(root=str(ROOT), xdg="", argv=["progress", "--db", str(private / "p.sqlite3")])
    run = subprocess.run([sys.executable, "-I", "-c", script], cwd=shared_tmp, env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)
    clean(run)
    assert run.returncode == 2 and run.stderr == f"error: {private / 'p.sqlite3'}: cannot open the progress store (Permission denied)\n"


# --------------------------------------------------------------------------- umask


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _umask(mask: int):
    return lambda: os.umask(mask)


def test_a_class_set_under_umask_000_is_not_writable_by_group_or_others(tmp_path):
    """Grading trusts variant.json: a world-writable key (or folder) lets anyone change a grade."""
    out = class_set(tmp_path, preexec_fn=_umask(0))
    for path in (out, out / "keys", out / "keys" / "ana", out / "handouts" / "ana"):
        assert _mode(path) == 0o755, path
    for path in (out / "keys" / "ana" / "variant.json", out / "handouts" / "ana" / "worksheet.md", out / "manifest.json"):
        assert _mode(path) == 0o644, path


def test_a_key_made_private_stays_private_when_the_class_set_is_made_again_under_a_loose_umask(tmp_path):
    out = class_set(tmp_path)
    key = out / "keys" / "ana" / "variant.json"
    key.chmod(0o600)
    run = problemgen("worksheet", "masking", "-o", str(out), "--roster", "roster.csv", "--secret-env", "CLASS_SECRET",
                     "--force", cwd=tmp_path, preexec_fn=_umask(0))
    clean(run)
    assert run.returncode == 0 and _mode(key) == 0o600


def test_an_export_folder_under_umask_077_keeps_its_sealed_keys_private(tmp_path):
    """The export set every file to 0o644 (0o755 for scripts) whatever the umask."""
    out = class_set(tmp_path)
    template = tmp_path / "template"
    run = problemgen("export", "github-classroom", "--class", str(out), "--roster", "roster.csv", "--match-by",
                     "github", "-o", str(template), cwd=tmp_path, preexec_fn=_umask(0o077))
    clean(run)
    assert run.returncode == 0, run.stderr
    assert _mode(template / ".problemgen" / "keys.sealed") == 0o600
    assert _mode(template / ".problemgen" / "grade.sh") == 0o700


# --------------------------------------------------------------------------- a root code grader


def _runtime_private() -> bool:
    from problemgen.code.sandbox import runtimeview

    return any(runtimeview.blocked_ancestor(os.path.join(p, "x")) for p in (sys.prefix, sys.base_prefix))


def _grade_peek(tmp_path: Path, wrapper: list[str]) -> subprocess.CompletedProcess:
    (tmp_path / "peek.py").write_text("import os\ndef softmax(x, axis=-1):\n    return os.getuid()\n")
    return subprocess.run([*wrapper, *PROBLEMGEN, "grade-code", "peek.py", "--task", "softmax", "--public-only",
                           "--format", "json"], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)


@AS_ROOT
@pytest.mark.parametrize("wrapper, why", [
    (["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"], "no private mount namespace"),
    (["unshare", "--user", "--map-root-user"], "could not switch to uid 65534"),
], ids=["docker-root-without-cap-sys-admin", "user-namespace-without-nobody"])
def test_a_root_grader_that_cannot_leave_uid_0_runs_no_student_code_and_says_why(tmp_path, wrapper, why):
    """Student code ran as uid 0 (without capabilities) in both: it owns every root-owned file."""
    if shutil.which(wrapper[0]) is None:
        pytest.skip(f"{wrapper[0]} is not installed")
    if wrapper[0] == "setpriv" and not _runtime_private():
        pytest.skip("this Python is readable by 'nobody': no namespace is needed to leave uid 0")
    probe = subprocess.run([*wrapper, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{wrapper[0]} cannot run here: {probe.stderr.strip()}")
    run = _grade_peek(tmp_path, wrapper)
    clean(run)
    assert run.returncode == 3, (run.stdout[-2000:], run.stderr)
    assert "would have run student code as uid 0" in run.stderr and why in run.stderr, run.stderr
    assert run.stdout == ""


@AS_ROOT
def test_a_root_grader_in_an_ordinary_root_container_runs_student_code_as_nobody(tmp_path):
    run = _grade_peek(tmp_path, [])
    clean(run)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["meta"]["confinement"]["uid"] == 65534
