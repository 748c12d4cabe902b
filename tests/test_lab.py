"""`make lab` serves JupyterLab on course/, with nbgrader's Validate service answering."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, UNITS

pytestmark = pytest.mark.xdist_group("lab")
TOKEN = "course-test-token"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _request(url: str, data: dict | None = None, timeout: float = 60) -> tuple[int, bytes]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read()


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    port = _free_port()
    arguments = (
        f"--no-browser --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={TOKEN}"
    )
    log = (tmp_path_factory.mktemp("lab") / "lab.log").open("w")
    server = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"VENV={sys.prefix}", f"LAB_ARGS={arguments}"],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                _request(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start; see {log.name}")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_lab_serves_the_learner_notebooks(lab_url):
    status, page = _request(f"{lab_url}/lab")
    assert status == 200 and b"JupyterLab" in page
    _, listing = _request(f"{lab_url}/api/contents")
    assert {entry["name"] for entry in json.loads(listing)["content"]} >= set(UNITS)


def test_validate_button_service_runs_the_visible_tests(lab_url):
    path = Path(UNITS[0]) / f"{UNITS[0]}.ipynb"
    _, answer = _request(f"{lab_url}/assignments/validate", {"path": str(path)}, timeout=120)
    result = json.loads(answer)
    assert result["success"] is True
    failed = result["value"]["failed"]
    assert failed, "the released notebook has unanswered exercises, so Validate must report them"
    assert any("NotImplementedError" in str(item) for item in failed)
