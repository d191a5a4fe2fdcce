"""Run untrusted submission code in a confined child process and bring back only raw arrays.

Never imports ``reference`` or the tasks: the sandbox runs calls and returns decoded values; what
is right or wrong is decided elsewhere. See rule 8 of the design guide and ``runner.py``.

What confines a child, in the order it is applied (``isolation.confine``), before any student byte:

1. credentials (``privileges``): every capability set emptied (effective, permitted, inheritable,
   ambient, bounding), securebits locked (no root fix-ups, no ambient raise), no_new_privs, and uid/gid
   ``nobody`` when the runtime is readable for it (``runtimeview`` arranges that for a runtime under
   ``/root``); a root grader that cannot switch runs no student code (``isolation.refuses_root``). The fork server reads the result from
   ``/proc/<pid>/status`` while the child waits, and the level is lowered if anything is left;
2. resource limits (CPU, address space, no file size, open files, no core, tasks when not root);
3. Landlock: read-only access to the submission, the standard library and numpy/sympy/mpmath;
4. the seccomp filter below (x86-64), which holds on every kernel, Landlock or not.

Seccomp policy (one row per rule; "self" = only the child's own pid, "or 0" = also the caller;
``fcntl`` refuses F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE and ``ioctl`` FIOSETOWN, SIOCSPGRP,
FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR; metadata changes are refused everywhere, the private directory
included, since no exercise needs them)::

    protects                           rule         system calls
    ---------------------------------- ------------ ----------------------------------------------------
    new processes                      EPERM        fork vfork
    new processes                      threads only clone
    new processes                      ENOSYS       clone3
    program execution                  EPERM        execve execveat uselib
    network                            EPERM        socket
    writing files                      read-only    open openat
    writing files                      ENOSYS       openat2
    writing files                      EPERM        creat truncate rename renameat renameat2 mkdir
                                                    mkdirat rmdir link linkat symlink symlinkat unlink
                                                    unlinkat mknod mknodat name_to_handle_at
                                                    open_by_handle_at
    file metadata: mode, owner         EPERM        chmod fchmod fchmodat fchmodat2 chown fchown lchown
                                                    fchownat
    file metadata: xattrs, ACLs        EPERM        setxattr lsetxattr fsetxattr setxattrat removexattr
                                                    lremovexattr fremovexattr removexattrat file_setattr
    file metadata: timestamps          EPERM        utime utimes futimesat utimensat
    file metadata, signals, leases     commands     fcntl ioctl
    other processes: limits            self or 0    prlimit64
    other processes: signals           self         kill tgkill rt_sigqueueinfo rt_tgsigqueueinfo
    other processes: signals           EPERM        tkill pidfd_send_signal pidfd_open pidfd_getfd
    other processes: tracing, memory   EPERM        ptrace process_vm_readv process_vm_writev kcmp
                                                    process_madvise process_mrelease migrate_pages
                                                    move_pages
    other processes: scheduling        EPERM        setpriority sched_setparam sched_setscheduler
                                                    sched_setattr ioprio_set
    other processes: scheduling        self or 0    sched_setaffinity
    shared IPC objects                 EPERM        shmget shmat shmctl shmdt semget semop semctl
                                                    semtimedop msgget msgsnd msgrcv msgctl mq_open
                                                    mq_unlink
    capabilities: clock                EPERM        settimeofday clock_settime clock_adjtime adjtimex
    capabilities: mounts, namespaces   EPERM        mount umount2 pivot_root chroot open_tree
                                                    open_tree_attr move_mount fsopen fsconfig fsmount
                                                    fspick mount_setattr unshare setns swapon swapoff
                                                    quotactl quotactl_fd
    capabilities: system               EPERM        reboot kexec_load kexec_file_load init_module
                                                    finit_module delete_module sethostname setdomainname
                                                    iopl ioperm acct vhangup syslog nfsservctl
                                                    lookup_dcookie personality
    kernel attack surface              EPERM        bpf perf_event_open fanotify_init userfaultfd keyctl
                                                    add_key request_key io_uring_setup io_uring_enter
                                                    io_uring_register

Typical use::

    sources, entry = collect("alice.py")
    staged = stage(sources, entry)
    with Sandbox(Limits(case_timeout=2.0), min_level="seccomp") as sandbox:
        run = sandbox.run(staged, [Call("softmax", (x,))])
    staged.cleanup()
"""

from problemgen.code.sandbox.isolation import LEVELS, rank
from problemgen.code.sandbox.runner import (
    BAD_OUTPUT,
    CRASH,
    IMPORT_ERROR,
    MEMORY,
    NO_RESULT,
    RETURNED,
    TIMEOUT,
    Call,
    IsolationError,
    Limits,
    Outcome,
    Sandbox,
    SandboxRun,
)
from problemgen.code.sandbox.staging import RejectedSubmission, StagedSubmission, collect, stage

__all__ = [
    "BAD_OUTPUT", "CRASH", "IMPORT_ERROR", "LEVELS", "MEMORY", "NO_RESULT", "RETURNED", "TIMEOUT",
    "Call", "IsolationError", "Limits", "Outcome", "RejectedSubmission", "Sandbox", "SandboxRun",
    "StagedSubmission", "collect", "rank", "stage",
]  # fmt: skip
