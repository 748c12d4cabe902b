"""Drive sandboxed workers from the trusted grader: send cells one at a time, enforce the
per-cell and per-notebook time limits, and survive whatever a submission does to its worker.

When a cell stops its worker (it exits the process, crashes, runs out of memory or time), the
worker is replaced and the submission is run again without that cell, so one bad cell costs
only what depends on it. Everything a worker sends is read with bounded size; what does not
parse or does not carry the cell's one-time nonce is ignored.

Example::

    >>> CellOutcome(index=3, ok=False, error="timed out").error
    'timed out'
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.grading.sandbox import SandboxSettings, run_as, worker_command, worker_environment

__all__ = ["CellOutcome", "Limits", "Worker", "WorkerFailed", "run_cells"]

_MAX_MESSAGE_BYTES = 64 * 2**20
# What a cell printed, per stream: the worker keeps 20,000 characters and adds a note if it cut.
_MAX_OUTPUT_CHARS = 20_100


class WorkerFailed(RuntimeError):
    """A worker could not be started; the message includes what it printed."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission (0 means no limit)."""

    cell_seconds: float = 60.0
    notebook_seconds: float = 300.0
    memory_bytes: int = 8 * 2**30
    file_bytes: int = 64 * 2**20
    open_files: int = 256
    processes: int = 64

    def for_child(self) -> dict[str, int]:
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": int(self.notebook_seconds) + 5,
            "file_bytes": self.file_bytes,
            "open_files": self.open_files,
            "processes": self.processes,
        }


@dataclass(frozen=True)
class CellOutcome:
    """What one cell did: ``ok`` unless it raised; the check records it produced; ``voided``:
    why the worker does not trust them (the state tests rely on changed while the cell ran, a
    thread the notebook started was running), empty when nothing was seen; ``put_back``: what
    the worker had to restore before a test cell (the names, for the instructor's review);
    ``output``: what the cell printed to stdout and stderr, shown in the autograded notebook and
    never judged."""

    index: int
    ok: bool
    error: str | None = None
    records: tuple[dict[str, Any], ...] = ()
    voided: tuple[str, ...] = ()
    put_back: tuple[str, ...] = ()
    output: tuple[str, str] = ("", "")


@dataclass
class _Reader:
    stream: Any
    buffer: bytearray = field(default_factory=bytearray)

    def line(self, deadline: float) -> dict[str, Any] | None:
        """The next parsable message before ``deadline``; ``None`` at end of stream or time."""
        selector = selectors.DefaultSelector()
        selector.register(self.stream, selectors.EVENT_READ)
        try:
            while True:
                newline = self.buffer.find(b"\n")
                if newline >= 0:
                    raw, self.buffer = bytes(self.buffer[:newline]), self.buffer[newline + 1 :]
                    try:
                        message = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(message, dict):
                        return message
                    continue
                if len(self.buffer) > _MAX_MESSAGE_BYTES:
                    self.buffer.clear()
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                chunk = os.read(self.stream.fileno(), 1 << 20)
                if not chunk:
                    return None
                self.buffer += chunk
        finally:
            selector.close()


class Worker:
    """One sandboxed worker process, started on first use and replaced when a job breaks it."""

    def __init__(self, settings: SandboxSettings, packages: Sequence[Path]) -> None:
        self._settings = settings
        self._packages = list(packages)
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: _Reader | None = None

    def _start(self) -> None:
        uid = run_as()
        self._process = subprocess.Popen(
            worker_command(self._settings, packages=self._packages),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=worker_environment(self._settings),
            cwd="/",
            user=uid,
            group=uid,
            start_new_session=True,
        )
        self._reader = _Reader(self._process.stdout)
        ready = self._reader.line(time.monotonic() + 120)
        if ready is None or ready.get("op") != "ready":
            code = self.stop()
            raise WorkerFailed(f"the grading worker did not start (exit status {code})")

    def stop(self) -> int | None:
        """Kill the worker and everything in its sandbox."""
        process, self._process = self._process, None
        if process is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return process.wait()

    def _send(self, message: dict[str, Any]) -> bool:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(message).encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def run_job(
        self,
        cells: Sequence[dict[str, Any]],
        limits: Limits,
        files: Mapping[str, str] | None = None,
        *,
        learner: bool = True,
    ) -> tuple[list[CellOutcome], int | None, str | None]:
        """Run ``cells`` as one submission, with ``files`` (name -> text) beside the notebook.
        Returns the outcomes of the cells that finished, and, when the job stopped early, the
        index of the cell that stopped it and why. A ``learner`` run sends no expected values
        (see :func:`autograder.checks.send_records_to`)."""
        if self._process is None or self._process.poll() is not None:
            self._start()
        assert self._reader is not None
        end = time.monotonic() + limits.notebook_seconds
        outcomes: list[CellOutcome] = []
        job = {"op": "job", "limits": limits.for_child(), "files": dict(files or {})}
        if not self._send({**job, "learner": learner}):
            return self._broken(outcomes, cells[0]["index"], "the grading worker stopped")
        started = self._reader.line(time.monotonic() + 60)
        if started is None or started.get("op") != "started":
            return self._broken(outcomes, cells[0]["index"], "the grading worker stopped")
        for cell in cells:
            nonce = secrets.token_hex(16)
            if not self._send({"op": "cell", **cell, "nonce": nonce}):
                return self._broken(outcomes, cell["index"], "this cell stopped the grader")
            deadline = min(end, time.monotonic() + limits.cell_seconds)
            reply = self._await_done(cell["index"], nonce, deadline)
            if reply is None:
                timed_out = time.monotonic() >= deadline
                why = (
                    f"this cell ran longer than {limits.cell_seconds:g} s"
                    if timed_out
                    else "this cell stopped the Python process that ran it"
                )
                return self._broken(outcomes, cell["index"], why)
            outcomes.append(_outcome(cell["index"], reply))
        self._send({"op": "end"})
        finished = self._reader.line(time.monotonic() + 30)
        while finished is not None and finished.get("op") != "exit":
            finished = self._reader.line(time.monotonic() + 30)
        if finished is None:
            self.stop()
        return outcomes, None, None

    def _await_done(self, index: int, nonce: str, deadline: float) -> dict[str, Any] | None:
        assert self._reader is not None
        while (message := self._reader.line(deadline)) is not None:
            if message.get("op") == "done" and message.get("nonce") == nonce:
                return message if message.get("index") == index else None
            if message.get("op") == "exit":
                return None
        return None

    def _broken(
        self, outcomes: list[CellOutcome], index: int, why: str
    ) -> tuple[list[CellOutcome], int | None, str | None]:
        self.stop()
        return outcomes, index, why


def _outcome(index: int, reply: dict[str, Any]) -> CellOutcome:
    records, voided, put_back = reply.get("records"), reply.get("voided"), reply.get("put_back")
    return CellOutcome(
        index=index,
        ok=reply.get("ok") is True,
        error=str(reply.get("error"))[:4000] if reply.get("error") is not None else None,
        records=tuple(r for r in records if isinstance(r, dict))
        if isinstance(records, list)
        else (),
        voided=tuple(str(v)[:2000] for v in voided) if isinstance(voided, list) else (),
        put_back=tuple(str(n)[:200] for n in put_back[:50]) if isinstance(put_back, list) else (),
        output=_printed(reply.get("output")),
    )


def _printed(output: object) -> tuple[str, str]:
    """The cell's (stdout, stderr) from its reply, each cut to a bounded size."""
    if not isinstance(output, list) or len(output) != 2:
        return ("", "")
    stdout, stderr = (text[:_MAX_OUTPUT_CHARS] if isinstance(text, str) else "" for text in output)
    return (stdout, stderr)


def run_cells(
    worker: Worker,
    cells: Sequence[dict[str, Any]],
    limits: Limits,
    *,
    attempts: int = 4,
    files: Mapping[str, str] | None = None,
    learner: bool = True,
) -> dict[int, CellOutcome]:
    """Run a submission's cells, with ``files`` beside the notebook; a cell that stops the
    worker is left out of a new run (at most ``attempts`` runs) and reported as failed with the
    reason. ``learner``: as in :meth:`Worker.run_job` (False for the solution's own run)."""
    skipped: dict[int, str] = {}
    outcomes: list[CellOutcome] = []
    for _ in range(attempts):
        remaining = [cell for cell in cells if cell["index"] not in skipped]
        if not remaining:
            break
        outcomes, stopped_at, why = worker.run_job(remaining, limits, files, learner=learner)
        if stopped_at is None:
            break
        skipped[stopped_at] = why or "this cell stopped the grader"
    else:
        done = {outcome.index for outcome in outcomes}
        for cell in cells:
            if cell["index"] not in done and cell["index"] not in skipped:
                skipped[cell["index"]] = "not run: earlier cells stopped the grader too often"
    result = {outcome.index: outcome for outcome in outcomes}
    for index, why in skipped.items():
        result[index] = CellOutcome(index=index, ok=False, error=why)
    return result
