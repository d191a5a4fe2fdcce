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
ANA = "import numpy as np\ndef softmax(x, axis=-1):\n    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n" \
      "    return e / e.sum(axis=axis, keepdims=True)\n"
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


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device every write to fails, full)")
@pytest.mark.parametrize("args", [["show", "masks.causal"], ["list", "--json"], ["--help"], ["list"]],
                         ids=["click", "click-json", "fast-path-help", "fast-path-list"])
def test_standard_output_on_a_full_disk_is_one_error_line_and_exit_4(tmp_path, args):
    """``problemgen list > file`` on a full disk: the listing is cut short, so the command must say so (exit 4,
    as any output it cannot write), not end in a traceback or in the interpreter's exit-time message (120)."""
    with open("/dev/full", "w") as full:
        run = problemgen(*args, cwd=tmp_path, stdout=full, stderr=subprocess.PIPE)
    clean(run)
    assert run.returncode == 4
    assert run.stderr.decode() == ("error: cannot write the standard output (No space left on device); "
                                   "what it shows is incomplete\n")


UNNAMED_FULL_DISK = """
import errno, sys
sys.path.insert(0, {root!r})
import problemgen.model.registry as registry
def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")  # as a buffered write's error: no file named
registry.generate = full
from problemgen.cli import main
main(["show", "masks.causal"])
"""


@pytest.mark.parametrize("stdout", ["pipe", "terminal"])
def test_a_full_disk_elsewhere_is_not_called_the_standard_output_cut_short(tmp_path, stdout):
    """An unnamed room error from a write no module foresaw (a full /dev/shm while staging a submission) was
    reported as 'cannot write the standard output ... incomplete' under a pipe or a terminal, which are
    never full; it is the generic one line, exit 4."""
    if stdout == "terminal":
        import pty

        leader, follower = pty.openpty()
        options = {"stdout": follower, "stderr": subprocess.PIPE}
    else:
        options = {"capture_output": True}
    try:
        run = subprocess.run([sys.executable, "-c", UNNAMED_FULL_DISK.format(root=str(ROOT))], cwd=tmp_path,
                             env=env(), timeout=60, **options)
    finally:
        if stdout == "terminal":
            os.close(follower)
            os.close(leader)
    clean(run)
    assert run.returncode == 4 and run.stderr.decode() == "error: cannot write (No space left on device)\n"


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


def _writable_by_others(root: Path) -> list[str]:
    """Every folder and file under ``root`` (``root`` too) that group or others may write."""
    paths = [root, *root.rglob("*")]
    return [f"{p.relative_to(root.parent)} {_mode(p):o}" for p in paths if not p.is_symlink() and _mode(p) & 0o022]


OUTPUTS_UNDER_A_LOOSE_UMASK = {
    "grade-a-class": ["grade", "subs", "--variants", "class", "-o", "new/grades/hw1"],
    "export-a-folder": ["export", "github-classroom", "--class", "class", "--roster", "roster.csv", "--match-by",
                        "github", "-o", "new/template"],
    "task-starter": ["task", "show", "softmax", "--starter", "new/softmax.py"],
    "quiz-progress": ["quiz", "--db", "new/data/progress.sqlite3", "--seed", "7"],
}


@pytest.mark.parametrize("args", OUTPUTS_UNDER_A_LOOSE_UMASK.values(), ids=OUTPUTS_UNDER_A_LOOSE_UMASK)
def test_no_output_or_folder_a_command_creates_under_umask_000_is_writable_by_group_or_others(tmp_path, args):
    """Gradebooks, reports and single files followed the umask (0o666), the parents of an output folder and
    an export's .github got 0o777: anyone on the host could change a grade before it was uploaded."""
    out = class_set(tmp_path)
    (tmp_path / "subs").mkdir()
    shutil.copy(out / "keys" / "ana" / "key.toml", tmp_path / "subs" / "ana.toml")
    (tmp_path / "new").mkdir(mode=0o755)
    (tmp_path / "new").chmod(0o755)
    run = problemgen(*args, cwd=tmp_path, preexec_fn=_umask(0), input=b"quit\n")
    clean(run)
    assert run.returncode == 0, run.stderr
    assert len(list((tmp_path / "new").iterdir())) == 1
    assert _writable_by_others(tmp_path / "new") == []


# --------------------------------------------------------------------------- mount namespaces (root)


def in_namespace(setup: str, *, cwd: Path | None = None, options: tuple[str, ...] = ()) -> list[str]:
    """A command prefix running its command in a private mount namespace (``unshare``) after ``setup``,
    shell lines run as root there (from ``cwd``); the test is skipped with the reason where that is not allowed."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a private mount namespace")
    prefix = ["unshare", "-m", *options, "sh", "-ec", f"mount --make-rprivate /\n{setup}\nexec \"$@\"", "ns"]
    probe = subprocess.run([*prefix, "true"], cwd=cwd, capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()[-300:]}")
    return prefix


READ_ONLY_SHM = "mount -t tmpfs -o ro,size=4k tmpfs /dev/shm"


def test_process_pools_that_cannot_start_leave_a_class_run_to_this_process(monkeypatch):
    """No /dev/shm (AWS Lambda, --ipc=none): the pool's first lock raised FileNotFoundError out of the run."""
    import _multiprocessing
    import multiprocessing.synchronize  # noqa: F401 - it reads SemLock's constants when imported

    from problemgen.classes import workers

    def no_semaphores(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory")

    forget = getattr(getattr(workers, "pools_usable", None), "cache_clear", lambda: None)
    monkeypatch.setattr(_multiprocessing, "SemLock", no_semaphores)
    forget()
    try:
        assert list(workers.ordered_map(abs, [-3, 1, -2], jobs=2)) == [3, 1, 2]
    finally:
        monkeypatch.undo()
        forget()


def test_a_class_set_and_its_grading_with_workers_run_where_dev_shm_is_read_only(tmp_path):
    """The class set stopped with 'error: cannot write (Read-only file system)' (exit 4), nothing written."""
    prefix = in_namespace(READ_ONLY_SHM)
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    run = subprocess.run([*prefix, *PROBLEMGEN, "worksheet", "masking", "-o", "class", "--roster", "roster.csv",
                          "--secret-env", "CLASS_SECRET", "--jobs", "2"], cwd=tmp_path, env=env(), capture_output=True,
                         text=True, timeout=120)
    clean(run)
    assert run.returncode == 0, run.stderr
    (tmp_path / "subs").mkdir()
    shutil.copy(tmp_path / "class" / "keys" / "ana" / "key.toml", tmp_path / "subs" / "ana.toml")
    run = subprocess.run([*prefix, *PROBLEMGEN, "grade", "subs", "--variants", "class", "-o", "grades", "--jobs", "2"],
                         cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    clean(run)
    assert run.returncode == 0, run.stderr
    assert "\nana,graded,1.0000," in (tmp_path / "grades" / "gradebook.csv").read_text(encoding="utf-8")


ONLY_OUT_WRITABLE = """
mount --bind out out
mount --bind inputs inputs
mount -o remount,bind,ro inputs
mount -o remount,bind,ro /
for tmp in /tmp /var/tmp /usr/tmp; do if mountpoint -q $tmp; then mount -o remount,bind,ro $tmp; fi; done
mount -t tmpfs -o ro,size=4k tmpfs /dev/shm
"""


@pytest.mark.parametrize("args", [
    ["grade-code", "ana.py", "--task", "softmax", "--public-only"],
    ["worksheet", "masking", "-o", "../out/sheet", "--format", "pdf"],
], ids=["grade-code", "worksheet-pdf"])
def test_no_writable_temporary_directory_is_one_error_line(tmp_path, args):
    """A read-only root with only the output folder writable: tempfile's FileNotFoundError was a traceback."""
    if "pdf" in args and shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    for folder in ("out", "inputs"):
        (tmp_path / folder).mkdir()
    (tmp_path / "inputs" / "ana.py").write_text("def softmax(x, axis=-1):\n    return x\n", encoding="utf-8")
    prefix = in_namespace(ONLY_OUT_WRITABLE, cwd=tmp_path)
    run = subprocess.run([*prefix, "sh", "-c", 'cd inputs && exec "$@"', "sh", *PROBLEMGEN, *args], cwd=tmp_path,
                         env=env(TMPDIR=str(tmp_path / "missing")), capture_output=True, text=True, timeout=120)
    clean(run)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("error: no usable temporary directory") and run.stderr.count("\n") == 1, run.stderr
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("args", [
    ["worksheet", "masking", "-o", "single", "--force"],
    ["grade", "subs", "--variants", "class", "-o", "grades"],
], ids=["worksheet", "grade-a-class"])
def test_an_output_folder_on_a_read_only_mount_is_named_as_such(tmp_path, args):
    """Said "permission denied", which sends a user to chmod a folder a read-only mount keeps read-only."""
    out = class_set(tmp_path)
    (tmp_path / "subs").mkdir()
    shutil.copy(out / "keys" / "ana" / "key.toml", tmp_path / "subs" / "ana.toml")
    folder = args[args.index("-o") + 1]
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "reports").mkdir()
    prefix = in_namespace(f"mount --bind {folder} {folder}\nmount -o remount,bind,ro {folder}", cwd=tmp_path)
    run = subprocess.run([*prefix, *PROBLEMGEN, *args], cwd=tmp_path, env=env(), capture_output=True, text=True,
                         timeout=120)
    clean(run)
    assert run.returncode == 2 and run.stderr.endswith(": cannot be written (read-only file system)\n"), run.stderr


def test_a_fork_server_that_does_not_start_is_one_error_naming_what_it_said(monkeypatch):
    """Too low an RLIMIT_NPROC stops the fork server; reading its log after closing it raised ValueError."""
    from problemgen.code.sandbox import runner

    monkeypatch.setattr(runner, "_FORKSERVER_BOOT", "import sys; sys.exit('cannot fork {root}{fd}')")
    with pytest.raises(runner.IsolationError, match=r"^the sandbox fork server did not start \(cannot fork"):
        runner.ForkServer(startup_timeout=30)


def test_a_fork_server_that_cannot_be_started_mid_class_stops_the_run_rather_than_score_zero(tmp_path, monkeypatch):
    """With RLIMIT_NPROC just high enough for the first fork server, every later submission was 'not graded'
    and scored 0, exit 0: grades lost without a word on stderr."""
    from problemgen.code.grade import grade_submission, make_plan
    from problemgen.code.sandbox import runner
    from problemgen.code.tasks import get_task

    (tmp_path / "ana.py").write_text(ANA, encoding="utf-8")
    plan = make_plan(get_task("softmax"), public_only=True)
    with runner.Sandbox() as sandbox:
        sandbox.probe()
        sandbox._acquire()  # its fork server is busy (another worker's submission): the next needs a new one
        monkeypatch.setattr(runner, "_FORKSERVER_BOOT", "import sys; sys.exit('Resource temporarily unavailable{root}{fd}')")
        with pytest.raises(runner.IsolationError, match="RLIMIT_NPROC"):
            grade_submission(plan, tmp_path / "ana.py", sandbox)


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


# --------------------------------------------------------------------------- /proc that hides or misnames processes


@AS_ROOT
@pytest.mark.slow
@pytest.mark.parametrize("proc", ["hidepid=2", "hidepid=invisible,subset=pid"])
def test_a_non_root_grader_under_a_hidepid_proc_confines_verifies_and_grades(shared_tmp, proc):
    """Every test of every submission was "the sandbox could not start the submission": a child hides from
    the fork server once it is non-dumpable, so its credentials could not be read back."""
    prefix = in_namespace(f"mount -t proc -o {proc} proc /proc")
    (shared_tmp / "ana.py").write_text(ANA, encoding="utf-8")
    argv = ["grade-code", "ana.py", "--task", "softmax", "--public-only", "--format", "json"]
    script = NO_PASSWD_ENTRY.format(root=str(ROOT), xdg="", argv=argv)
    run = subprocess.run([*prefix, sys.executable, "-I", "-c", script], cwd=shared_tmp, env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=120)
    clean(run)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["score"] == 1.0 and report["meta"]["confinement"]["uid"] == 54321, run.stdout[:2000]
    assert report["meta"]["confinement"]["no_new_privs"] is True


@AS_ROOT
def test_a_pid_namespace_without_its_own_proc_runs_no_student_code_and_says_why(tmp_path):
    """/proc/<pid> named processes of the outer namespace: a root grader read a host process's credentials
    and refused as if it could not leave uid 0; the processes it killed as escapees could be anyone's."""
    probe = subprocess.run(["unshare", "-p", "-f", "true"], capture_output=True, text=True)
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip(f"no pid namespace here: {probe.stderr.strip()[-300:]}")
    run = _grade_peek(tmp_path, ["unshare", "-p", "-f"])
    clean(run)
    assert run.returncode == 3 and run.stdout == "", run.stderr
    assert run.stderr.startswith("error: the sandbox cannot check its processes: /proc belongs to another pid "
                                 "namespace") and run.stderr.count("\n") == 1, run.stderr
