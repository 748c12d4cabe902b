"""Start a JupyterLab server for a test, wait until it answers, and stop it with all it started.

Shared by the tests that talk to JupyterLab over HTTP (test_lab.py) and in a browser
(test_browser.py, test_hub.py), with the one step both browser tests take: Validate.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest


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
        deadline = time.monotonic() + 90
        try:
            while True:
                try:
                    urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"JupyterLab did not start; see {log}")
                    time.sleep(0.5)
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


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
