"""Worker processes for a class run: how many, and grading in them with the rows back in order.

A class run grades one sheet per student; with workers, the sheets go out in small batches and the rows
come back in the order they went out, so the gradebook never depends on the number of workers. At most
two batches per worker are out at once: the rows waiting for the writer never grow with the class.
"""

from __future__ import annotations

import os
import time
from collections import deque
from functools import partial
from itertools import islice
from typing import Callable, Iterator, TypeVar

from problemgen.processes import pools_usable

Item = TypeVar("Item")
Row = TypeVar("Row")

MAX_BATCH = 16
"""Most items a worker handles per task."""
LOADAVG = "/proc/loadavg"


def worker_count(jobs: int | None, students: int) -> int:
    """Processes for a class run: ``jobs`` when given, else one per hundred sheets, at most 4 and at most
    the CPUs nothing else is running on.

    Below about a hundred sheets per worker, starting workers and sending reports back costs more than
    it saves; and on CPUs other programs keep busy, extra workers add that cost without adding CPU time
    (measured with bench/grading.py: two workers beside another busy program took 1.12x as long as one
    process), so the automatic choice never makes a run slower than one process.
    """
    if jobs is not None:
        return max(1, min(jobs, students))
    wanted = min(4, students // 100)
    return max(1, min(wanted, idle_cpus())) if wanted > 1 else 1


def idle_cpus(samples: int = 3) -> int:
    """The CPUs this process may use minus the tasks other programs are running on them right now.

    Linux counts running tasks in ``/proc/loadavg`` (this process included); the busiest of a few reads
    5 ms apart is taken, to lean towards fewer workers. Elsewhere every usable CPU counts as idle.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busiest = 1
    try:
        for sample in range(samples):
            if sample:
                time.sleep(0.005)
            with open(LOADAVG, encoding="ascii") as loadavg:
                busiest = max(busiest, int(loadavg.read().split()[3].split("/")[0]))
    except (OSError, ValueError, IndexError):
        return cpus
    return max(1, cpus - (busiest - 1))


def ordered_map(function: Callable[..., Row], items: list[Item], jobs: int, shared: object = None) -> Iterator[Row]:
    """``map(function, items)`` in ``jobs`` worker processes (in this process when ``jobs`` is 1), rows
    in the order of ``items``. ``function`` must be a module-level function (it is pickled).

    ``shared``, when given, is what every item needs alike (a class's index of variant ids): it is sent to
    each worker once, when the worker starts, and ``function(item, shared)`` is called. Put in every item
    instead, it would be pickled again with each batch, a cost growing with the class times the batches."""
    if jobs <= 1 or not pools_usable():  # no /dev/shm: no pool (problemgen.processes)
        yield from (function(item) if shared is None else function(item, shared) for item in items)
        return
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, min(MAX_BATCH, len(items) // (jobs * 8)))
    batches = (items[start:start + size] for start in range(0, len(items), size))
    call = partial(_call, function, shared is not None)
    with ProcessPoolExecutor(max_workers=jobs, initializer=_set_shared, initargs=(shared,)) as pool:
        pending = deque(pool.submit(_batch, call, batch) for batch in islice(batches, 2 * jobs))
        while pending:
            rows = pending.popleft().result()
            pending.extend(pool.submit(_batch, call, batch) for batch in islice(batches, 1))
            yield from rows


_SHARED: object = None
"""A worker process's ``shared`` of the :func:`ordered_map` it was started for."""


def _set_shared(shared: object) -> None:
    global _SHARED
    _SHARED = shared


def _call(function: Callable[..., Row], with_shared: bool, item: Item) -> Row:
    return function(item, _SHARED) if with_shared else function(item)


def _batch(function: Callable[[Item], Row], batch: list[Item]) -> list[Row]:
    return [function(item) for item in batch]
