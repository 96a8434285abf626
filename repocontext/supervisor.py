"""Run N worker processes on one listening socket, replace those that die, stop them all.

``serve --workers N`` puts every core to work past the GIL: the supervisor binds the socket
once (:mod:`repocontext.server` does, so the banner names a real port and a port in use fails
before anything starts), then starts N processes (the ``spawn`` start method: no state of the
parent is inherited but what is passed) that each open the workspace and serve the same socket;
the kernel spreads the connections between the processes accepting on it. Each worker's
native thread pools (BLAS, the embedder's tokenizer) get its share of the cores
(:data:`THREAD_POOLS`) unless the environment sizes them.

Worker 0 starts first and alone: it restores the memory archive and runs the background jobs
(:mod:`repocontext.workspace.background`), and the others start once it says it is ready, so
the restore sees the memory as it was. SIGTERM or SIGINT stops every worker gracefully (each
closes its workspace; after :data:`STOP_GRACE_S` a worker still running is killed). A worker
that dies is started again, at most :data:`MAX_RESTARTS` times in :data:`RESTART_WINDOW_S` per
worker; past that the supervisor stops the others and fails.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from multiprocessing.queues import SimpleQueue
from multiprocessing.synchronize import Event
from typing import Final, Protocol

from repocontext.errors import RepoContextError, WorkersFailedError
from repocontext.settings import Settings

__all__ = [
    "MAX_RESTARTS",
    "RESTART_WINDOW_S",
    "STOP_GRACE_S",
    "Supervisor",
    "WorkerStart",
    "WorkerTarget",
    "worker_count",
]

MAX_RESTARTS: Final = 5
"""Restarts of one worker allowed within :data:`RESTART_WINDOW_S`."""
RESTART_WINDOW_S: Final = 60.0
STOP_GRACE_S: Final = 30.0
"""Seconds a worker gets to close its workspace after SIGTERM before it is killed."""
THREAD_POOLS: Final = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "RAYON_NUM_THREADS",
)
"""The native thread pools (BLAS, the embedder's tokenizer) each worker sizes to its share of
the cores, unless the environment already sets them: N processes each spinning one thread per
core would fight over the cores they share."""
READY_TIMEOUT_S: Final = 300.0
"""Seconds worker 0 gets to open the store and restore the archive."""
_TICK_S: Final = 0.2

_log = logging.getLogger(__name__)
_spawn = multiprocessing.get_context("spawn")


@dataclass(frozen=True, slots=True)
class WorkerStart:
    """What one worker process is started with (pickled into the new process)."""

    settings: Settings
    listener: socket.socket
    index: int
    """0 runs the background jobs and the ``--repo`` bootstrap."""
    first: bool
    """The first start of this worker (not a restart): worker 0 then bootstraps ``--repo``."""
    ready: Event
    """Set by the worker once its workspace is open and its background work started."""
    failures: SimpleQueue[tuple[str, str, str]]
    """Where a worker that cannot start puts its error (code, message, hint)."""

    def failed(self, error: RepoContextError) -> None:
        """Tell the supervisor why this worker cannot start (it raises the same error)."""
        self.failures.put((error.code, error.message, error.hint))


class WorkerTarget(Protocol):
    """The function a worker process runs (module-level: the spawn method imports it)."""

    def __call__(self, start: WorkerStart) -> None:
        """Serve until SIGTERM or SIGINT."""


@dataclass(slots=True)
class _Slot:
    index: int
    process: SpawnProcess
    ready: Event
    restarts: list[float] = field(default_factory=list)


class Supervisor:
    """N worker processes serving one socket."""

    def __init__(
        self,
        settings: Settings,
        listener: socket.socket,
        target: WorkerTarget,
        workers: int,
        *,
        on_started: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Prepare ``workers`` processes running ``target`` on ``listener`` (none runs yet).

        ``on_started`` runs once worker 0 is ready, before the others start.
        """
        self._on_started = on_started
        self._failures: SimpleQueue[tuple[str, str, str]] = _spawn.SimpleQueue()
        self._settings = settings
        self._listener = listener
        self._target = target
        self._workers = workers
        self._clock = clock
        self._slots: list[_Slot] = []
        self._stopping = threading.Event()

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers now running."""
        return [slot.process.pid for slot in self._slots if slot.process.pid is not None]

    def run(self) -> None:
        """Start the workers and supervise them until SIGTERM or SIGINT (or :meth:`stop`).

        Raises:
            RepoContextError: Worker 0 could not start: the error it raised (for example
                ``archive.corrupt``), else ``WorkersFailedError``.
            WorkersFailedError: A worker kept dying.
        """
        previous = _handle_stop_signals(self.stop)
        try:
            self._start_all()
            while not self._stopping.wait(_TICK_S):
                self._replace_dead()
        finally:
            self._stop_all()
            _restore_signals(previous)

    def stop(self) -> None:
        """Ask :meth:`run` to stop every worker and return (thread- and signal-safe)."""
        self._stopping.set()

    def _start_all(self) -> None:
        share = str(max(1, _cores() // self._workers))
        for name in THREAD_POOLS:  # (inherited by every worker spawned from here on)
            os.environ.setdefault(name, share)
        first = self._spawn(0, first=True)
        self._slots.append(first)
        ready = first.ready
        deadline = self._clock() + READY_TIMEOUT_S
        while not ready.wait(_TICK_S):
            if self._stopping.is_set():
                return
            if not self._failures.empty():
                raise _error_of(*self._failures.get())
            if not first.process.is_alive() or self._clock() > deadline:
                first.process.join(STOP_GRACE_S)  # (its last word may still be on its way)
                if not self._failures.empty():
                    raise _error_of(*self._failures.get())
                raise WorkersFailedError(
                    f"worker 0 did not start (exit code {first.process.exitcode})",
                    hint="Its error is logged above; `repocontext serve --workers 1` shows "
                    "the same failure in one process.",
                )
        self._on_started()
        for index in range(1, self._workers):
            self._slots.append(self._spawn(index, first=True))
        _log.info("serving with %d worker processes: %s", self._workers, self.pids)

    def _spawn(self, index: int, *, first: bool) -> _Slot:
        ready = _spawn.Event()
        start = WorkerStart(self._settings, self._listener, index, first, ready, self._failures)
        process = _spawn.Process(
            target=self._target, args=(start,), name=f"repocontext-worker-{index}", daemon=False
        )
        process.start()
        return _Slot(index, process, ready)

    def _replace_dead(self) -> None:
        for position, slot in enumerate(self._slots):
            if slot.process.is_alive() or self._stopping.is_set():
                continue
            now = self._clock()
            recent = [at for at in slot.restarts if now - at < RESTART_WINDOW_S]
            if len(recent) >= MAX_RESTARTS:
                raise WorkersFailedError(
                    f"worker {slot.index} died {len(recent) + 1} times within "
                    f"{RESTART_WINDOW_S:g} s (last exit code {slot.process.exitcode})",
                    hint="Its error is logged above; fix it and start the server again.",
                )
            _log.warning(
                "worker %d (pid %s) exited with %s; starting it again",
                slot.index,
                slot.process.pid,
                slot.process.exitcode,
            )
            replacement = self._spawn(slot.index, first=False)
            replacement.restarts = [*recent, now]
            self._slots[position] = replacement

    def _stop_all(self) -> None:
        for slot in self._slots:
            if slot.process.is_alive() and slot.process.pid is not None:
                _signal(slot.process.pid, signal.SIGTERM)
        deadline = self._clock() + STOP_GRACE_S
        for slot in self._slots:
            slot.process.join(max(0.0, deadline - self._clock()))
            if slot.process.is_alive():
                _log.warning("worker %d did not stop in time; killing it", slot.index)
                slot.process.kill()
                slot.process.join()
        self._slots.clear()


def worker_count(settings: Settings) -> int:
    """The worker processes ``settings`` ask for (unset: one per core this process may use)."""
    if settings.workers is not None:
        return settings.workers
    return _cores()


def _cores() -> int:
    cores = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, cores or 1)


def _error_of(code: str, message: str, hint: str) -> RepoContextError:
    """The error a worker reported, as the class of its code (one of the error tree's)."""
    classes: list[type[RepoContextError]] = [RepoContextError]
    while classes:
        kind = classes.pop()
        if kind.code == code:
            return kind(message, hint=hint)
        classes += kind.__subclasses__()
    return WorkersFailedError(message, hint=hint)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return


def _handle_stop_signals(stop: Callable[[], None]) -> dict[int, object]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, object] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, lambda *_: stop())
    return previous


def _restore_signals(previous: dict[int, object]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)  # type: ignore[arg-type]
