"""Student code never gets the grader's powers: credentials, the seccomp policy, and one student vs another.

Everything a submission tries here runs inside the sandbox. The live seccomp checks run in a forked
child of the test that installs the filter and then calls each refused system call with arguments
the kernel itself would reject (EFAULT, EINVAL, EBADF) or that change nothing (the same value again):
EPERM can then only come from the filter, and nothing changes if a rule were missing.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import struct
import subprocess
import sys
import textwrap

import pytest

import problemgen.code.sandbox as sandbox_package
from problemgen.code.sandbox import RETURNED, Call, Limits, Sandbox, isolation, seccomp, stage

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

FAST = Limits(import_timeout=5.0, case_timeout=3.0, max_restarts=1)
ZERO = "0000000000000000"


def run_source(box: Sandbox, source: str, calls: list[Call]):
    staged = stage({"submission.py": textwrap.dedent(source)}, "submission.py")
    try:
        return box.run(staged, calls)
    finally:
        staged.cleanup()


@pytest.fixture(scope="module")
def box():
    with Sandbox(FAST) as sandbox:
        yield sandbox


# --------------------------------------------------------------------------- credentials (point 1)


def test_the_child_holds_no_capability_in_any_set_as_read_by_the_fork_server(box):
    confinement = box.probe().confinement
    caps = confinement["capabilities"]
    assert set(caps) == {"effective", "permitted", "inheritable", "ambient", "bounding"}
    assert all(caps[name] == ZERO for name in ("effective", "permitted", "inheritable", "ambient")), caps
    assert confinement["no_new_privs"] is True
    if os.geteuid() == 0:  # root can empty the bounding set too, and does
        assert caps["bounding"] == ZERO
        assert confinement["uid"] == isolation.NOBODY and confinement["gid"] == isolation.NOBODY, confinement


def test_a_runtime_nobody_cannot_reach_is_exposed_so_the_child_still_imports_new_modules(box):
    """This machine's Python lives under /root (mode 0700): imports after the uid switch must still work."""
    run = run_source(box, """
        import os
        def late():
            import sympy, heapq, decimal
            return [os.getuid(), str(sympy.Rational(1, 3)), heapq.nsmallest(1, [3, 2])[0]]
        def peek():
            return sorted(os.listdir("/root"))
    """, [Call("late"), Call("peek")])
    assert run.outcomes[0].status == RETURNED, run.outcomes[0].message
    assert run.outcomes[0].value[1:] == ["1/3", 2]
    if os.geteuid() == 0:
        assert run.outcomes[0].value[0] == isolation.NOBODY
    assert run.outcomes[1].status != RETURNED or ".pyenv" not in str(run.outcomes[1].value)  # nothing else of /root


def test_a_child_that_kept_its_capabilities_cannot_claim_more_than_process():
    with Sandbox(Limits(disable=("privileges",))) as kept:
        probe = kept.probe()
    if os.geteuid() != 0:
        pytest.skip("a non-root grader has no capability to keep")
    assert probe.confinement["capabilities"]["effective"] != ZERO
    assert probe.isolation == "process" and probe.confinement["level"] == "process"


def test_the_level_is_lowered_to_what_the_kernel_shows():
    clean = {"capabilities": dict.fromkeys(("effective", "permitted", "inheritable", "ambient", "bounding"), ZERO),
             "seccomp": 2}  # fmt: skip
    assert isolation.verified_level("seccomp+landlock", clean) == "seccomp+landlock"
    assert isolation.verified_level("seccomp+landlock", None) == "process"
    assert isolation.verified_level("seccomp+landlock", {**clean, "seccomp": 0}) == "rlimits"
    for name in ("effective", "permitted", "inheritable", "ambient"):
        leaky = {**clean, "capabilities": {**clean["capabilities"], name: "0000000000200000"}}
        assert isolation.verified_level("seccomp+landlock", leaky) == "process", name
    bounding_only = {**clean, "capabilities": {**clean["capabilities"], "bounding": "000001ffffffffff"}}
    assert isolation.verified_level("seccomp", bounding_only) == "seccomp"  # a ceiling, not a power


# --------------------------------------------------------------------------- the policy (point 2)


def test_the_policy_table_in_the_package_docstring_is_the_filter_policy():
    table = "\n".join(("    " + line).rstrip() for line in seccomp.policy_table().splitlines())
    assert table in sandbox_package.__doc__
    listed = [name for _, _, names in seccomp.POLICY for name in names]
    assert len(listed) == len(set(listed)) and all(name in seccomp.NR for name in listed)


def _run_bpf(program: bytes, nr: int, args: tuple[int, ...] = (), arch: int = seccomp.AUDIT_ARCH_X86_64) -> int:
    """A classic-BPF interpreter for the few opcodes the filter uses; returns the action."""
    data = struct.pack("<iI", nr, arch) + struct.pack("<Q", 0) + b"".join(
        struct.pack("<Q", a & 0xFFFFFFFFFFFFFFFF) for a in (*args, *([0] * (6 - len(args)))))
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x06:
            return k
        elif code in (0x15, 0x45, 0x35):
            taken = {0x15: acc == k, 0x45: bool(acc & k), 0x35: acc >= k}[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


OWN = 4242


@pytest.mark.parametrize(("what", "rule", "names"), seccomp.POLICY, ids=[f"{w}/{r}" for w, r, _ in seccomp.POLICY])
def test_every_policy_row_decides_as_documented(what, rule, names):
    program = seccomp.build_filter(OWN)
    deny, allow, nosys = seccomp.DENY, seccomp.RET_ALLOW, seccomp.NOSYS
    for name in names:
        nr = seccomp.NR[name]
        decide = lambda *args: _run_bpf(program, nr, args)  # noqa: E731
        if rule == "EPERM":
            assert decide() == deny and decide(OWN) == deny, name
        elif rule == "ENOSYS":
            assert decide() == nosys, name
        elif rule == "self":
            assert decide(OWN) == allow and decide(1) == deny and decide(0) == deny and decide(-OWN) == deny, name
        elif rule == "self or 0":
            assert decide(OWN) == allow and decide(0) == allow and decide(1) == deny and decide(OWN + 1) == deny, name
        elif rule == "threads only":
            assert decide(0x00010000 | 0x00000100) == allow and decide(0x11) == deny, name  # thread / fork-like
            assert decide(0x00010000 | 0x20000000) == deny, name  # a thread in a new namespace
        elif rule == "read-only":
            flag_arg = 1 if name == "open" else 2
            read, write = [0] * 3, [0] * 3
            write[flag_arg] = os.O_WRONLY | os.O_CREAT
            assert decide(*read) == allow and decide(*write) == deny, name
        elif rule == "commands":
            refused = seccomp.FCNTL_DENIED if name == "fcntl" else seccomp.IOCTL_DENIED
            assert all(decide(3, cmd) == deny for cmd in refused), name
            assert decide(3, 1) == allow and decide(3, 0x5401) == allow, name  # F_GETFD / TCGETS stay allowed
        else:
            raise AssertionError(f"untested rule {rule}")
    assert _run_bpf(program, 39) == allow  # getpid: not in the policy
    assert _run_bpf(program, 39, arch=0x40000003) == seccomp.RET_KILL_PROCESS  # i386 ABI
    assert _run_bpf(program, 39 | 0x40000000) == deny  # x32 ABI


# Raw calls with arguments the kernel would refuse: (name, args, errno seen here without the filter)
LIVE = [
    ("setxattr", (0, 0, 0, 0, 0), errno.EFAULT),
    ("fremovexattr", (-1, 0), errno.EFAULT),
    ("utimensat", (-1, 0, 0, 0), errno.EBADF),
    ("chmod", (0, 0o644), errno.EFAULT),
    ("fchown", (-1, 0, 0), errno.EBADF),
    ("clock_settime", (1, 0), errno.EINVAL),  # CLOCK_MONOTONIC cannot be set
    ("adjtimex", (0,), errno.EFAULT),
    ("sched_setscheduler", (0, 99, 0), errno.EINVAL),
    ("fanotify_init", (0xFFFFFFFF, 0), errno.EINVAL),
    ("mount", (0, 0, 0, 0, 0), errno.EFAULT),
    ("umount2", (0, 0), errno.EFAULT),
    ("swapoff", (0,), errno.EFAULT),
    ("reboot", (0, 0, 0, 0), errno.EINVAL),
    ("delete_module", (0, 0), errno.ENOSYS),
    ("kexec_load", (0, 0, 0, 0xFFFFFFFF), errno.ENOSYS),
    ("sethostname", (0, 0xFFFFFFFF), errno.EINVAL),
    ("iopl", (7,), errno.ENOSYS),
    ("bpf", (0xFFFF, 0, 0), errno.EINVAL),
    ("setns", (-1, 0), errno.EBADF),
    ("keyctl", (0xFFFF, 0, 0, 0, 0), errno.EOPNOTSUPP),
    ("ptrace", (0xFFFF, 0, 0, 0), errno.ESRCH),
    ("process_vm_readv", (0, 0, 0, 0, 0, 0xFF), errno.EINVAL),
    ("shmctl", (-1, 0xFFFF, 0), errno.EINVAL),
]


def _live_errnos(calls: list[tuple[str, tuple, int]], extra) -> dict[str, int]:
    """Fork, install only the filter, make the calls, report errnos over a pipe (0 = the call succeeded)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            seccomp.install(os.getpid())
            found = {}
            for name, args, _ in calls:
                result = libc.syscall(seccomp.NR[name], *[ctypes.c_long(a) for a in args])
                found[name] = ctypes.get_errno() if result == -1 else 0
            found.update(extra())
            os.write(write, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data)


def _same_value_calls() -> dict[str, int]:
    """Operations on the test process (our parent) that would change nothing even if let through."""
    parent, found = os.getppid(), {}

    def attempt(name, action):
        try:
            action()
            found[name] = 0
        except OSError as exc:
            found[name] = exc.errno

    attempt("prlimit parent", lambda: resource.prlimit(parent, resource.RLIMIT_CORE, resource.prlimit(0, resource.RLIMIT_CORE)))
    attempt("prlimit self", lambda: resource.prlimit(0, resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE)))
    attempt("setrlimit self", lambda: resource.setrlimit(resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE)))
    attempt("kill parent", lambda: os.kill(parent, 0))
    attempt("kill self", lambda: os.kill(os.getpid(), 0))
    attempt("setpriority parent", lambda: os.setpriority(os.PRIO_PROCESS, parent, os.getpriority(os.PRIO_PROCESS, parent)))
    attempt("setaffinity parent", lambda: os.sched_setaffinity(parent, os.sched_getaffinity(parent)))
    attempt("setaffinity self", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))
    return found


@pytest.mark.skipif(not seccomp.available(), reason="the filter is built for x86-64 Linux")
def test_the_filter_refuses_metadata_changes_other_processes_and_capability_calls_on_its_own():
    """Without Landlock and with every capability of the test process: EPERM can only come from seccomp."""
    found = _live_errnos(LIVE, _same_value_calls)
    for name, _, unfiltered in LIVE:
        assert found[name] == errno.EPERM, (name, errno.errorcode.get(found[name]), "unfiltered would be", unfiltered)
    for name in ("prlimit parent", "kill parent", "setpriority parent", "setaffinity parent"):
        assert found[name] == errno.EPERM, name
    for name in ("prlimit self", "setrlimit self", "kill self", "setaffinity self"):
        assert found[name] == 0, name


# --------------------------------------------------------------------------- one student vs another (point 3)

SABOTAGE = """
import fcntl, os, resource, signal

GRADER = {grader}


def _try(action):
    try:
        action()
    except Exception:
        pass


def _sabotage():
    server = os.getppid()  # the fork server: every later student is forked from it
    for limit in (resource.RLIMIT_NOFILE, resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_CPU):
        _try(lambda: resource.prlimit(server, limit, (1, 1)))
        # the grader only gets its own values back: if this got through the test fails, nothing breaks
        _try(lambda: resource.prlimit(GRADER, limit, resource.prlimit(GRADER, limit)))
    _try(lambda: os.setpriority(os.PRIO_PROCESS, server, 19))
    _try(lambda: os.sched_setaffinity(server, {{min(os.sched_getaffinity(0))}}))
    _try(lambda: fcntl.fcntl(3, fcntl.F_SETOWN, server))  # SIGIO to the server when the grader reads
    _try(lambda: fcntl.fcntl(3, 10, signal.SIGKILL))  # F_SETSIG
    _try(lambda: fcntl.fcntl(3, fcntl.F_SETFL, os.O_ASYNC))
    _try(lambda: os.kill(server, signal.SIGSTOP))


_sabotage()


def softmax(x, axis=-1):
    _sabotage()
    return x
"""


def _grader_limits() -> dict[str, tuple[int, int]]:
    return {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}


@pytest.mark.slow
@pytest.mark.parametrize("disable", [(), ("nobody",), ("nobody", "landlock")], ids=["nobody", "uid0-no-caps", "uid0-no-landlock"])
def test_a_hostile_student_between_two_honest_ones_cannot_lower_their_scores(tmp_path, disable):
    from problemgen.classes.code_class import class_rows
    from problemgen.code.grade import make_plan
    from problemgen.code.tasks import get_task

    import problemgen.code.tasks

    honest = os.path.join(os.path.dirname(problemgen.code.tasks.__file__), "solutions", "softmax.py")
    for name, source in (("a_honest", open(honest).read()), ("b_hostile", SABOTAGE.format(grader=os.getpid())),
                         ("c_honest", open(honest).read())):  # fmt: skip
        (tmp_path / f"{name}.py").write_text(source)
    before = _grader_limits()
    plan = make_plan(get_task("softmax"), secret="class-sabotage")
    with Sandbox(Limits(import_timeout=5.0, case_timeout=2.0, max_restarts=1, disable=disable)) as box:
        box.probe()
        (server,) = box._servers
        limits = _process_limits(server.proc.pid)
        _, rows = class_rows(plan, tmp_path, box)
        scores = {row.student: row.report.score for row in rows}  # graded in order, on the same fork server
        assert box._servers == [server] and server.alive(), "the fork server had to be replaced: something got through"
        assert _process_limits(server.proc.pid) == limits
    assert scores["a_honest"] == 1.0 and scores["c_honest"] == 1.0, scores
    assert scores["b_hostile"] < 0.25
    assert _grader_limits() == before


def _process_limits(pid: int) -> tuple[str, int]:
    with open(f"/proc/{pid}/limits") as handle:
        return handle.read(), os.getpriority(os.PRIO_PROCESS, pid)


def test_a_tampered_fork_server_is_detected_before_the_next_fork_and_replaced():
    """Simulates a child that got through: the test (trusted) lowers the fork server's limits itself."""
    source = "def ping():\n    return 7\n"
    with Sandbox(FAST) as box:
        assert run_source(box, source, [Call("ping")]).outcomes[0].value == 7
        (server,) = box._servers
        soft, hard = resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE, (8, hard))
        run = run_source(box, source, [Call("ping")])
        assert run.outcomes[0].status == RETURNED and run.outcomes[0].value == 7
        (replacement,) = box._servers
        assert replacement is not server and not server.alive()


# --------------------------------------------------------------------------- a non-root grader

def _reachable_by_others(path: str) -> bool:
    """Whether a user with no relation to the owner can reach ``path``: every parent searchable by others."""
    import stat

    current = os.path.abspath(path)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return True
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
        current = parent


NON_ROOT_GRADER = """
import json, os, sys
sys.path.insert(0, {root!r})
from problemgen.code.sandbox import Call, Limits, Sandbox, runtimeview, stage

# the test machine's Python (a venv and the interpreter it was made from) may live under /root or in a
# private temporary directory: make both reachable
runtimeview.expose([sys.prefix, sys.base_prefix])
os.setgroups([])
os.setresgid({uid}, {uid}, {uid})
os.setresuid({uid}, {uid}, {uid})
source = '''
import os, resource
def probe():
    server, found = os.getppid(), {{}}
    for name, action in [
        ("prlimit server", lambda: resource.prlimit(server, resource.RLIMIT_CORE, resource.prlimit(server, resource.RLIMIT_CORE))),
        ("kill server", lambda: os.kill(server, 0)),
        ("setpriority server", lambda: os.setpriority(os.PRIO_PROCESS, server, os.getpriority(os.PRIO_PROCESS, server))),
        ("prlimit self", lambda: resource.prlimit(0, resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE))),
    ]:
        try:
            action()
            found[name] = 0
        except OSError as exc:
            found[name] = exc.errno
    return found
'''
with Sandbox(Limits(import_timeout=10.0, case_timeout=5.0)) as box:
    staged = stage({{"submission.py": source}}, "submission.py")
    run = box.run(staged, [Call("probe")])
    staged.cleanup()
print(json.dumps({{"confinement": run.confinement, "level": run.isolation, "status": run.outcomes[0].status,
                  "value": run.outcomes[0].value, "message": run.outcomes[0].message}}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="arranging a non-root grader needs root (the suite already is one then)")
def test_a_non_root_grader_confines_its_children_too(tmp_path):
    """The grader itself runs as 'nobody' here: same-uid processes are only kept apart by the filter."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not _reachable_by_others(root):
        pytest.skip(f"the checkout {root} is not reachable by 'nobody' (a private parent directory)")
    script = NON_ROOT_GRADER.format(root=root, uid=isolation.NOBODY)
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    confinement, caps = report["confinement"], report["confinement"]["capabilities"]
    assert confinement["uid"] == isolation.NOBODY
    assert all(caps[name] == ZERO for name in ("effective", "permitted", "inheritable", "ambient")), caps
    assert report["status"] == RETURNED, report["message"]
    found = report["value"]
    assert found["prlimit self"] == 0
    for name in ("prlimit server", "kill server", "setpriority server"):
        assert found[name] == errno.EPERM, (name, found)
    if seccomp.available():
        assert report["level"] in ("seccomp", "seccomp+landlock")


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader switches the child to 'nobody'")
def test_a_private_temp_directory_runs_no_student_code_as_uid_0_and_says_why(tmp_path, monkeypatch):
    """A $TMPDIR under a 0700 directory (pytest's tmp_path): a submission staged there is out of nobody's
    reach, and the child used to run it as uid 0 without capabilities, the owner of every root-owned file."""
    import tempfile

    from problemgen.code.sandbox import IsolationError

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile caches the directory it chose
    with Sandbox(FAST) as box:
        with pytest.raises(IsolationError, match=r"uid 0 \(root\) \(.*not reachable by 'nobody'.*nothing was run"):
            run_source(box, "import os\ndef who():\n    return os.getuid()\n", [Call("who")])
