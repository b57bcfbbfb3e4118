"""The batch loop of `report` and `passes`: isolated checks on a thread pool, each row
handed back the moment it is decided, and a Ctrl-C that stops everything at once.

On the first Ctrl-C the queued work is cancelled, every running child and warm
server is killed (isolate.cancel_all) and the caller keeps what finished; a second
Ctrl-C exits immediately. Rows are handled in the calling thread, so a journal
written from `on_row` holds exactly the rows that were reported.
"""
from __future__ import annotations

import concurrent.futures
import os
import queue
import signal
from typing import Callable, Iterable

from harness.process import isolate
from harness.verdict import EXIT_INTERRUPTED, EXIT_TERMINATED


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `kill`), taken as Ctrl-C is: the same stop, nothing
    finished lost, no child left; exit 143 instead of 130."""


def terminate_like_ctrl_c(signum, frame) -> None:
    raise Terminated()


def exit_code_of(interrupt: KeyboardInterrupt) -> int:
    return EXIT_TERMINATED if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED


def run(todo: Iterable, work: Callable, jobs: int, on_row: Callable,
        first: Callable[[], None] | None = None) -> int | None:
    """`work(item)` for every item on `jobs` threads, `on_row(item, row)` in this thread as
    each finishes; what `on_row` returns (items, or None) is run too (the pass sweep holds
    checks back until an earlier one says whether they need running). `first` runs on the
    pool before any item (a validation that should warm the same worker). The exit code
    of an interruption (130 Ctrl-C, 143 SIGTERM), None when every item ran."""
    pool = concurrent.futures.ThreadPoolExecutor(jobs)
    futures: dict = {}
    handed: set = set()
    finished: queue.Queue = queue.Queue()   # futures as they finish, for this thread

    def submit(items) -> int:
        started = {pool.submit(work, item): item for item in items or ()}
        futures.update(started)
        for future in started:
            future.add_done_callback(finished.put)
        return len(started)

    try:
        if first is not None:
            pool.submit(first).result()
        outstanding = submit(todo)
        while outstanding:
            future = finished.get()
            outstanding -= 1
            handed.add(future)
            outstanding += submit(on_row(futures[future], future.result()))
    except KeyboardInterrupt as interrupt:
        code = exit_code_of(interrupt)
        pool.shutdown(wait=False, cancel_futures=True)
        isolate.cancel_all()
        for number in (signal.SIGINT, signal.SIGTERM):   # a second one: out at once
            signal.signal(number, lambda *_: os._exit(code))
        for future, item in futures.items():     # finished before the Ctrl-C, not yet handed
            if future not in handed and future.done() and not future.cancelled() \
                    and future.exception() is None:
                on_row(item, future.result())
        return code
    except BaseException:   # bad input a child refused, our own bug: stop the rest
        pool.shutdown(wait=False, cancel_futures=True)
        isolate.kill_running()
        raise
    pool.shutdown(wait=False)
    return None
