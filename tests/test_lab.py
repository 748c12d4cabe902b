"""`make lab` serves JupyterLab on course/, with nbgrader's Validate service answering."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, UNITS
from tests.lab_server import free_port, running_lab

pytestmark = pytest.mark.xdist_group("lab")
TOKEN = "course-test-token"


def _request(url: str, data: dict | None = None, timeout: float = 60) -> tuple[int, bytes]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read()


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    port = free_port()
    arguments = (
        f"--no-browser --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={TOKEN}"
    )
    with running_lab(
        ["make", "--no-print-directory", "lab", f"VENV={sys.prefix}", f"LAB_ARGS={arguments}"],
        url=f"http://127.0.0.1:{port}",
        token=TOKEN,
        log=tmp_path_factory.mktemp("lab") / "lab.log",
        cwd=ROOT,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    ) as url:
        yield url


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
