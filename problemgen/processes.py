"""Whether worker processes can be used here: what a class set and a class run ask before starting a pool.

Python's process pools (``concurrent.futures.ProcessPoolExecutor``) need a POSIX semaphore, which Linux
keeps in ``/dev/shm``. Containers without it (AWS Lambda, ``--ipc=none``) or with it read-only made a large
class set or class run fail at the pool's first lock, with a FileNotFoundError traceback or ``error: cannot
write (Read-only file system)`` and nothing written. Workers only save time, so such a run works in its
own process instead.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def pools_usable() -> bool:
    """True when a process pool can start here. Asked once per process: one semaphore made and removed."""
    try:
        import multiprocessing

        multiprocessing.get_context().Lock()
    except (ImportError, OSError):  # ImportError: a Python built without sem_open
        return False
    return True
