"""Start a JupyterLab server for a test, wait until it answers, and stop it with all it started.

Shared by the tests that talk to JupyterLab over HTTP (test_lab.py) and in a browser
(test_browser.py, test_hub.py), with what both browser tests use: Chromium and its flags,
JupyterLab's commands, and Validate.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# headless on a closed network: without these Chromium keeps trying to reach outside
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
APP = "window.jupyterapp"  # JupyterLab's application object in the page


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_lab(
    command: Sequence[str], *, url: str, token: str, log: Path, **popen: object
) -> Iterator[str]:
    """Run ``command`` (which serves JupyterLab at ``url``), yield ``url`` once
    ``/api/status`` answers, and stop the whole process group afterwards."""
    with log.open("w") as output:
        server = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True, **popen
        )
        try:
            wait_until_answering(
                f"{url}/api/status?token={token}", server, lambda: f"see {log}", "JupyterLab"
            )
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def wait_until_answering(
    url: str, server: subprocess.Popen, details: Callable[[], str], what: str
) -> None:
    """Return once ``url`` answers; fail the test, naming ``what`` with ``details()``, when
    ``server`` stops first or 90 seconds pass."""
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not start: {details()}")
            time.sleep(0.5)


def run_command(page, command: str, args: dict | None = None) -> object:
    """Run JupyterLab command ``command`` in ``page`` and wait for it to finish."""
    return page.evaluate(
        f"([command, args]) => {APP}.commands.execute(command, args)", [command, args or {}]
    )


def validate(page) -> object:
    """Press nbgrader's Validate button in a JupyterLab ``page`` (Playwright); the result
    dialog, once nbgrader has answered."""
    page.get_by_role("button", name="Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=180_000)
    page.wait_for_function(
        "() => !document.querySelector('.jp-Dialog')?.innerText.includes('Validating')",
        timeout=180_000,
    )
    return dialog
