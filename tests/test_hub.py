"""A real classroom, end to end in a browser: JupyterHub on this machine with real local accounts,
nbgrader's exchange, formgrader as a hub service, and the class grader in the middle.

The hub runs docs/deploy/one-server/jupyterhub_config.py, the file the guide gives; the test
sets only where things are (environment variables the file reads), and on the command line the
ports and the hub's own state files. Learners' servers run from the course environment at a
prefix every account can read (made as the guide's install would, :mod:`tests.hub_environment`),
with the guide's nbgrader_config.py and the course's JupyterLab settings in its
``etc/jupyter``, and the guide's learners' settings beside it. In Chromium (Playwright):

1. a learner logs in, finds JupyterLab asking nothing, none of nbgrader's instructor tools in
   her server (no formgrader or course list served, no formgrader, course list or
   create-assignment in JupyterLab) and unit 01 trusted, fetches unit 01, answers, validates
   and submits;
2. the instructor collects in formgrader, grades the class with ``python -m autograder grade``
   (as the grader account, in its sandbox), opens the learner's submission in formgrader, sees
   the grader's decisions, adds a comment, generates and releases feedback;
3. the learner fetches her feedback and reads the comment and her points.

Screenshots are kept in ``artifacts/hub/``. Needs root (accounts, a hub that starts servers as
them), useradd, bubblewrap, configurable-http-proxy (npm), Chromium and Playwright; skipped,
saying which is missing, elsewhere. Everything it makes (accounts, the prefix, processes) is
removed at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.conftest import LAYOUT, ROOT
from tests.hub_environment import DEPLOY, install_course_environment
from tests.lab_server import (
    APP,
    CHROMIUM,
    CHROMIUM_FLAGS,
    free_port,
    run_command,
    validate,
    wait_until_answering,
)

pytestmark = pytest.mark.xdist_group("hub")
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

UNIT = "01_leaf_tensors"
PREFIX = "agc-hub-"  # accounts and the group made by this test
LEARNER, INSTRUCTOR, GRADER = (PREFIX + name for name in ("ada", "prof", "grader"))
GROUP = PREFIX + "class"
ARTIFACTS = ROOT / "artifacts" / "hub"
COMMENT = "Well reasoned: only leaves made by you get .grad."


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root: the hub starts each learner's server as that learner"
    for tool in ("useradd", "chpasswd", "groupadd", "bwrap", "configurable-http-proxy"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (configurable-http-proxy: npm install -g)"
    if CHROMIUM is None:
        return "no Chromium here: apt-get install chromium"
    return None


def _run(command, *, user=None, cwd=None, env=None, check=True) -> str:
    account = pwd.getpwnam(user) if user else None
    environment = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", **(env or {})}
    if account:
        environment.update(HOME=account.pw_dir, USER=user, LOGNAME=user)
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, check=False,
        user=account.pw_uid if account else None, group=account.pw_gid if account else None,
        extra_groups=[] if account else None,
    )  # fmt: skip
    if check:
        assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


class _Classroom:
    """The machine's side: accounts, the course environment, the grader's course, the hub."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.python = install_course_environment(base / "opt")
        self.passwords = {name: secrets.token_urlsafe(12) for name in (LEARNER, INSTRUCTOR)}
        self.accounts: list[str] = []
        self.hub: subprocess.Popen | None = None

    def make_accounts(self) -> None:
        _run(["groupadd", GROUP])
        (self.base / "home").mkdir(mode=0o755)
        for name in (LEARNER, INSTRUCTOR, GRADER):
            _run(["useradd", "--create-home", "--home-dir", str(self.base / "home" / name),
                  "--shell", "/bin/bash", "--groups", GROUP, name])  # fmt: skip
            self.accounts.append(name)
        lines = "".join(f"{name}:{word}\n" for name, word in self.passwords.items())
        subprocess.run(["chpasswd"], input=lines, text=True, check=True)
        # For the test only, in the learner's own settings: JupyterLab's application object in
        # the page, so that the test can open and inspect notebooks as the learner would.
        account = pwd.getpwnam(LEARNER)
        settings = Path(account.pw_dir) / ".jupyter" / "jupyter_server_config.json"
        settings.parent.mkdir()
        settings.write_text(json.dumps({"LabApp": {"expose_app_in_browser": True}}))
        for path in (settings.parent, settings):
            os.chown(path, account.pw_uid, account.pw_gid)

    @property
    def course(self) -> Path:
        return self.base / "home" / GRADER / "autograd-course"

    def make_course(self) -> None:
        """The grader's clone of the course (only what grading needs), private to it, and unit
        01 generated and released as the guide says."""
        for part in ("solutions", "course", "autograder", "gradgraph"):
            shutil.copytree(
                ROOT / part,
                self.course / part,
                ignore=shutil.ignore_patterns("__pycache__", "first_predictions.json"),
            )
        account = pwd.getpwnam(GRADER)
        for folder, _, files in os.walk(self.course.parent):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(name, account.pw_uid, account.pw_gid)
        self.course.parent.chmod(0o700)  # learners must not read the solutions
        env = {"JUPYTER_CONFIG_PATH": str(self.course / "autograder"),
               "PATH": f"{self.python.parent}:/usr/bin:/bin"}  # fmt: skip
        for step in (["generate_assignment", UNIT, "--force"], ["release_assignment", UNIT]):
            _run([str(self.python), "-m", "nbgrader", *step], user=GRADER, cwd=self.course, env=env)

    def grade(self) -> str:
        """What the guide tells the instructor to run after collecting: the class grader."""
        env = {"PATH": f"{self.python.parent}:/usr/bin:/bin"}
        return _run([str(self.python), "-m", "autograder", "grade", "submitted",
                     "--nbgrader-course", ".", "--out", "graded", "--workers", "1"],
                    user=GRADER, cwd=self.course, env=env)  # fmt: skip

    def start_hub(self) -> str:
        port = free_port()
        self.formgrader_port = free_port()
        env = {
            **{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "HOME")},
            "AUTOGRAD_PREFIX": str(self.base / "opt"),
            "AUTOGRAD_GRADER": GRADER,
            "AUTOGRAD_GROUP": GROUP,
            "AUTOGRAD_COURSE_ROOT": str(self.course),
            "AUTOGRAD_INSTRUCTORS": INSTRUCTOR,
            "AUTOGRAD_FORMGRADER_URL": f"http://127.0.0.1:{self.formgrader_port}",
        }
        command = [
            sys.executable, "-m", "jupyterhub", "-f", str(DEPLOY / "jupyterhub_config.py"),
            f"--port={port}", "--ip=127.0.0.1",
            f"--JupyterHub.hub_bind_url=http://127.0.0.1:{free_port()}",
            f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}",
            f"--JupyterHub.db_url=sqlite:///{self.base / 'jupyterhub.sqlite'}",
            f"--JupyterHub.cookie_secret_file={self.base / 'jupyterhub_cookie_secret'}",
        ]  # fmt: skip
        self.log = (self.base / "hub.log").open("w")
        self.hub = subprocess.Popen(
            command,
            cwd=self.base,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        wait_until_answering(f"{url}/hub/api", self.hub, lambda: "\n" + self._log_tail(), "the hub")
        return url

    def _log_tail(self) -> str:
        return (self.base / "hub.log").read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.hub is not None and self.hub.poll() is None:
            os.killpg(self.hub.pid, signal.SIGTERM)  # the hub stops the servers it started
            try:
                self.hub.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.hub.pid, signal.SIGKILL)
        for name in self.accounts:  # anything still running as an account this test made
            uid = pwd.getpwnam(name).pw_uid
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit() and entry.stat().st_uid == uid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(entry.name), signal.SIGKILL)
        time.sleep(0.5)
        for name in self.accounts:
            subprocess.run(["userdel", name], capture_output=True, check=False)
        subprocess.run(["groupdel", GROUP], capture_output=True, check=False)


@pytest.fixture(scope="module")
def classroom():
    if (why := _missing()) is not None:
        pytest.skip(why)
    for name in (LEARNER, INSTRUCTOR, GRADER):  # left over by a run that was killed
        subprocess.run(["userdel", name], capture_output=True, check=False)
    subprocess.run(["groupdel", GROUP], capture_output=True, check=False)
    base = Path(tempfile.mkdtemp(prefix=PREFIX, dir="/tmp"))
    base.chmod(0o755)
    room = _Classroom(base)
    try:
        room.make_accounts()
        room.make_course()
        room.url = room.start_hub()
        yield room
    finally:
        room.stop()
        shutil.rmtree(base, ignore_errors=True)


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _log_in(browser, room, name: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{room.url}/hub/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", room.passwords[name])
    page.click("input[type=submit], button[type=submit]")
    return page


def _wait_for_lab(page) -> None:
    """JupyterLab has started and restored its workspace, and shows its current tab: the
    launcher on a fresh profile, and on a return whatever tab was in front when the learner
    left (the assignment list, not a notebook, after a submission)."""
    page.wait_for_function(f"() => {APP} && {APP}.shell", timeout=180_000)
    page.evaluate(f"() => {APP}.restored")  # a promise: evaluate waits for it
    page.wait_for_function(
        f"() => {APP}.shell.currentWidget && {APP}.shell.currentWidget.isVisible",
        timeout=120_000,
    )


def _notifications(page) -> list[str]:
    """What JupyterLab's notification area holds (the news question would be one)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.Toastify__toast, .jp-Notification-Toast')]
                 .map(t => t.innerText)"""
    )


_INSTRUCTOR_PLUGINS = ("formgrader", "course-list", "create-assignment")
_INSTRUCTOR_COMMANDS = ("nbgrader:open-formgrader", "nbgrader:open-formgrader-local",
                        "nbgrader:open-course-list", "nbgrader:open-create-assignment")  # fmt: skip


def _no_instructor_tools(page, room) -> None:
    """The learner's server, started with the guide's learners' settings, serves neither
    formgrader nor the course list, and her JupyterLab has no formgrader, course list or
    create-assignment: the Nbgrader menu holds the assignment list alone."""
    for path in ("formgrader", "formgrader/manage_assignments", "formgraders"):
        response = page.request.get(f"{room.url}/user/{LEARNER}/{path}", max_redirects=0)
        assert response.status in (403, 404), f"/user/{LEARNER}/{path}: {response.status}"
    plugins = page.evaluate(
        f"""ids => ids.filter(id => {APP}.hasPlugin('@jupyter/nbgrader:' + id))""",
        [*_INSTRUCTOR_PLUGINS, "assignment-list", "validate-assignment"],
    )
    assert plugins == ["assignment-list", "validate-assignment"], plugins
    commands = page.evaluate(f"() => {APP}.commands.listCommands()")
    assert "nbgrader:open-assignment-list" in commands
    assert [c for c in _INSTRUCTOR_COMMANDS if c in commands] == []
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    menu = page.locator("#jp-mainmenu-nbgrader")
    menu.wait_for(timeout=10_000)
    items = menu.evaluate(
        """menu => [...menu.querySelectorAll('.lm-Menu-item')]
                   .filter(item => item.checkVisibility())
                   .map(item => item.innerText.trim())"""
    )
    _shot(page, "1b-learner-nbgrader-menu")
    page.keyboard.press("Escape")
    assert items == ["Assignment List"], items


def _first_answer() -> tuple[int, str]:
    """The index of unit 01's first answer cell and its solution, without nbgrader's markers."""
    source = nbformat.read(LAYOUT.source_notebook(UNIT), as_version=4)
    for index, cell in enumerate(source.cells):
        if cell.metadata.get("nbgrader", {}).get("solution"):
            lines = [line for line in cell.source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]  # fmt: skip
            return index, "\n".join(lines)
    raise AssertionError("unit 01 has no answer cell")


def _workspace_saved(response) -> bool:
    return "/lab/api/workspaces/" in response.url and response.request.method == "PUT"


def _learner_works(browser, room) -> None:
    page = _log_in(browser, room, LEARNER)
    _wait_for_lab(page)
    page.wait_for_timeout(3000)  # the news question, where it is asked, comes after start-up
    _shot(page, "1-learner-logged-in")
    assert _notifications(page) == [], "JupyterLab asked something on a fresh profile"
    _no_instructor_tools(page, room)

    run_command(page, "nbgrader:open-assignment-list")
    released = page.locator("#released_assignments_list")
    released.get_by_text(UNIT).wait_for(timeout=60_000)
    _shot(page, "2-learner-assignment-list")
    released.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list")
    fetched.get_by_text(UNIT).first.wait_for(timeout=60_000)

    page.goto(f"{room.url}/user/{LEARNER}/lab/tree/{UNIT}/{UNIT}.ipynb")
    cells = len(nbformat.read(LAYOUT.learner_notebook(UNIT), as_version=4).cells)
    page.wait_for_function(
        f"""() => {{
            const panel = {APP} && {APP}.shell.currentWidget;
            return panel && panel.context?.path?.endsWith('{UNIT}.ipynb')
                && panel.content.widgets.length === {cells};
        }}""",
        timeout=120_000,
    )
    trusted = page.evaluate(
        f"""() => {APP}.shell.currentWidget.content.widgets
                 .filter(c => c.model.type === 'code').map(c => c.model.trusted)"""
    )
    assert trusted and all(trusted), "the fetched course notebook opened untrusted"
    assert page.locator(".nbgrader-CreateAssignmentWidget").count() == 0, "create-assignment"
    index, answer = _first_answer()
    page.evaluate(
        f"""([index, answer]) => {{
            const notebook = {APP}.shell.currentWidget.content;
            notebook.widgets[index].model.sharedModel.setSource(answer);
        }}""",
        [index, answer],
    )
    run_command(page, "docmanager:save")
    page.wait_for_timeout(1000)
    _shot(page, "3-learner-answered")
    dialog = validate(page)
    _shot(page, "4-learner-validated")
    assert "failed" in dialog.inner_text().lower() or "NotImplementedError" in dialog.inner_text()
    dialog.get_by_role("button").last.click()

    run_command(page, "nbgrader:open-assignment-list")
    fetched = page.locator("#fetched_assignments_list")
    fetched.get_by_role("button", name="Submit").first.click()
    submitted = page.locator("#submitted_assignments_list")
    submitted.get_by_text(UNIT).first.wait_for(timeout=60_000)
    _shot(page, "5-learner-submitted")
    # JupyterLab saves its workspace every few seconds: once it has, the learner's return
    # restores the assignment list in front of the notebook
    with page.expect_response(_workspace_saved, timeout=60_000):
        pass
    page.context.close()


def _manage(page, room) -> None:
    page.goto(f"{room.url}/services/autograd/formgrader/manage_assignments")
    page.locator("tr", has_text=UNIT).first.wait_for(timeout=60_000)


def _button(page, column: str) -> None:
    page.locator("tr", has_text=UNIT).locator(f".{column} a").first.click()
    page.locator(".modal-title").first.wait_for(timeout=120_000)
    text = page.locator(".modal-dialog").first.inner_text()
    assert "Success" in text, text
    page.locator(".modal-footer button").first.click()
    page.wait_for_timeout(500)


def _comment_saved(response) -> bool:
    return "/api/comment/" in response.url and response.request.method == "PUT"


def _instructor_grades(browser, room) -> None:
    page = _log_in(browser, room, INSTRUCTOR)
    page.wait_for_load_state()
    _manage(page, room)
    _shot(page, "6-instructor-formgrader")
    _button(page, "collect")
    assert (room.course / "submitted" / LEARNER / UNIT / f"{UNIT}.ipynb").is_file()

    summary = room.grade()
    assert "graded" in summary, summary

    page.goto(f"{room.url}/services/autograd/formgrader/gradebook/{UNIT}/{UNIT}")
    page.locator("a", has_text="Submission #1").first.click()
    page.locator(".comment").first.wait_for(timeout=60_000)
    body = page.locator("body").inner_text()
    assert "The class grader" in body, "formgrader does not show the grader's decisions"
    # formgrader binds its comment boxes once it has fetched the comments: a change typed
    # before that is never saved
    page.wait_for_function(
        "() => window.formgrader && formgrader.comments && formgrader.comments.loaded === true",
        timeout=60_000,
    )
    comment = page.locator("textarea.comment").first
    comment.click()
    comment.fill(COMMENT)
    # formgrader saves a comment when it loses focus, by a PUT that may be slow under load
    with page.expect_response(_comment_saved, timeout=60_000) as saved:
        page.keyboard.press("Tab")
    assert saved.value.ok, saved.value.status
    _shot(page, "7-instructor-submission")

    _manage(page, room)
    _button(page, "generate-feedback")
    _button(page, "release-feedback")
    _shot(page, "8-instructor-released-feedback")
    page.context.close()


def _wait_for_file(folder: Path, pattern: str, seconds: float = 60) -> Path:
    """The one file matching pattern under folder, once it is there (the fetch is asynchronous)."""
    deadline = time.monotonic() + seconds
    while not (found := sorted(folder.glob(pattern))) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert len(found) == 1, f"{folder}/{pattern}: {found}"
    return found[0]


def _learner_reads_feedback(browser, room) -> None:
    page = _log_in(browser, room, LEARNER)
    _wait_for_lab(page)
    run_command(page, "nbgrader:open-assignment-list")
    submitted = page.locator("#submitted_assignments_list")
    submitted.get_by_role("button", name="Fetch Feedback").first.click()
    feedback = _wait_for_file(room.base / "home" / LEARNER / UNIT / "feedback", f"*/{UNIT}.html")
    relative = feedback.relative_to(room.base / "home" / LEARNER)
    page.goto(f"{room.url}/user/{LEARNER}/files/{relative}")
    page.get_by_text(COMMENT).wait_for(timeout=30_000)
    text = page.locator("body").inner_text()
    assert "The class grader" in text and "Score:" in text
    _shot(page, "9-learner-feedback")
    page.context.close()


def test_a_class_on_jupyterhub_from_fetch_to_feedback(classroom):
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_FLAGS,
        )
        try:
            _learner_works(browser, classroom)
            _instructor_grades(browser, classroom)
            _learner_reads_feedback(browser, classroom)
        except Exception:
            print(classroom._log_tail(), file=sys.stderr)
            raise
        finally:
            browser.close()
    # The instructor's comment is in the gradebook, and grading the class again keeps it.
    classroom.grade()
    with Gradebook(f"sqlite:///{classroom.course / 'gradebook.db'}") as book:
        comments = book.find_submission_notebook(UNIT, UNIT, LEARNER).comments
        assert COMMENT in [comment.manual_comment for comment in comments]
