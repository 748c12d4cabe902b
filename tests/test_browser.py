"""In a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright against
JupyterLab started by ``make lab`` on a fresh profile. JupyterLab asks nothing and the course's
notebooks open trusted; a learner runs a unit, plays and steps the graph player, answers an
exercise and runs its test, and validates; an instructor opens formgrader; the notebook exported
to HTML plays its animation with no kernel; a page made by ``to_html()`` inspects the node picked.
Screenshots are kept in ``artifacts/browser/``.

Skipped, saying why, where Chromium or Playwright is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gradgraph
from gradgraph.inspector import node_facts
from tests.conftest import LAYOUT, ROOT
from tests.lab_server import (
    APP,
    CHROMIUM,
    CHROMIUM_FLAGS,
    free_port,
    run_command,
    running_lab,
    validate,
)

pytestmark = pytest.mark.xdist_group("browser")
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
if CHROMIUM is None:
    pytest.skip("no Chromium here: apt-get install chromium", allow_module_level=True)

# Unit 02 shows its first graph before its first exercise (Run All stops at an unanswered
# exercise, as JupyterLab does); unit 05's first answer is one line, typed as a learner would.
PLAYER_UNIT = "02_retain_graph"
EXERCISE_UNIT = "05_hooks"
KOREAN_UNIT = "01_leaf_tensors"
TOKEN = "browser-test-token"
ARTIFACTS = ROOT / "artifacts" / "browser"


def _course_copy(base: Path) -> Path:
    """A course root of our own (solutions/ and course/ copied, a gradebook of its own), so that
    the browser's saves never touch the repository."""
    root = base / "course-root"
    shutil.copytree(LAYOUT.solutions, root / "solutions")
    shutil.copytree(LAYOUT.course, root / "course")
    config = base / "config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        "c.CourseDirectory.source_directory = 'solutions'\n"
        "c.CourseDirectory.release_directory = 'course'\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{root / 'gradebook.db'}'\n"
    )
    return root


def _make_lab(tmp_path_factory, language: str):
    """``make lab COURSE_LANG=language`` on a copy of the course, a fresh profile each."""
    base = tmp_path_factory.mktemp(f"browser-{language}")
    root = _course_copy(base)
    port = free_port()
    arguments = (
        f"--no-browser --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={TOKEN} "
        "--LabApp.expose_app_in_browser=True"
    )
    folder = root / "course" if language == "en" else root / "course" / language
    command = ["make", "--no-print-directory", "lab", f"VENV={sys.prefix}",
               f"COURSE_LANG={language}", f"LAB_ROOT={folder}",
               f"LAB_ARGS={arguments}"]  # fmt: skip
    (base / "home").mkdir()
    environment = {
        **os.environ,
        "HOME": str(base / "home"),  # a fresh profile: nothing answered, nothing signed before
        "JUPYTER_CONFIG_PATH": str(base / "config"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    with running_lab(
        command,
        url=f"http://127.0.0.1:{port}",
        token=TOKEN,
        log=base / "lab.log",
        env=environment,
        cwd=ROOT,
    ) as url:
        yield {"url": url, "root": root, "base": base}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    yield from _make_lab(tmp_path_factory, "en")


@pytest.fixture(scope="module")
def lab_ko(tmp_path_factory):
    yield from _make_lab(tmp_path_factory, "ko")


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def _shot(element, name: str) -> bytes:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return element.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _wait_idle(page, timeout_s: float = 180) -> None:
    """Wait until the notebook's kernel is idle and no cell is queued or running."""
    page.wait_for_function(
        f"""() => {{
            const panel = {APP}.shell.currentWidget;
            const kernel = panel && panel.sessionContext.session?.kernel;
            const busy = [...document.querySelectorAll('.jp-InputPrompt')]
                .some(prompt => prompt.textContent.includes('*'));
            return kernel && kernel.status === 'idle' && !busy;
        }}""",
        timeout=timeout_s * 1000,
        polling=500,
    )


def _open_unit(page, lab, unit: str) -> None:
    # ?reset: a fresh workspace, so that no notebook a previous test opened comes back first
    page.goto(f"{lab['url']}/lab/tree/{unit}/{unit}.ipynb?reset&token={TOKEN}")
    page.wait_for_function(
        f"""path => {{
            const panel = {APP} && {APP}.shell.currentWidget;
            return panel && panel.context?.path === path && panel.sessionContext?.session?.kernel;
        }}""",
        arg=f"{unit}/{unit}.ipynb",
        timeout=120_000,
    )
    _wait_idle(page)


def test_a_fresh_profile_is_asked_nothing_and_the_unit_opens_trusted(page, lab):
    _open_unit(page, lab, EXERCISE_UNIT)
    page.wait_for_timeout(3000)  # the news question, where it is asked, comes after start-up
    toasts = page.locator(".Toastify__toast, .jp-Notification-Toast")
    assert toasts.count() == 0, toasts.all_inner_texts()
    trusted = page.evaluate(
        f"""() => {APP}.shell.currentWidget.content.widgets
                 .filter(c => c.model.type === 'code').map(c => c.model.trusted)"""
    )
    assert trusted and all(trusted), "the course notebook opened untrusted"
    _shot(page, "lab-fresh-profile")


def _frame_source(image) -> str:
    return image.get_attribute("src") or ""


def _wait_for_new_frame(page, image, shown: str) -> None:
    """Until the player's image holds another frame than `shown` (the kernel draws it)."""
    page.wait_for_function(
        "([img, shown]) => img.getAttribute('src') !== shown",
        arg=[image.element_handle(), shown],
        timeout=30_000,
    )


def test_a_learner_runs_a_unit_and_plays_the_graph(page, lab):
    _open_unit(page, lab, PLAYER_UNIT)
    run_command(page, "notebook:run-all-cells")
    _wait_idle(page)
    _shot(page, "learner-after-run-all")
    player = page.locator(".widget-vbox", has=page.locator(".widget-play")).first
    player.scroll_into_view_if_needed()
    image = player.locator("img").first
    first = _shot(image, "player-step-0")
    shown = _frame_source(image)
    player.get_by_role("button", name="step ▶").click()
    _wait_for_new_frame(page, image, shown)
    second = _shot(image, "player-step-1")
    assert first != second, "stepping did not change the frame"
    readout = player.locator(".widget-readout")
    assert readout.inner_text().strip() == "1"
    shown = _frame_source(image)
    player.locator(".widget-play button").first.click()  # play
    _wait_for_new_frame(page, image, shown)
    page.wait_for_timeout(1000)  # let it play on a little
    third = _shot(image, "player-playing")
    assert third != second, "playing did not change the frame"
    assert int(readout.inner_text()) > 1


def _type_first_answer(page, unit: str) -> int:
    """Type the unit's first answer into its answer cell as a learner would; its index."""
    answer = page.evaluate(
        f"""() => {{
            const cells = {APP}.shell.currentWidget.content.widgets;
            return cells.findIndex(c => (c.model.getMetadata('nbgrader') || {{}}).solution);
        }}"""
    )
    assert answer >= 0
    # JupyterLab renders far-away cells lazily: bring the answer cell in through the notebook
    # itself, then type as a learner would.
    page.evaluate(
        f"""async i => {{
            const notebook = {APP}.shell.currentWidget.content;
            notebook.activeCellIndex = i;
            await notebook.scrollToItem(i, 'center');
        }}""",
        answer,
    )
    panel = page.evaluate(f"() => {APP}.shell.currentWidget.id")
    editor = page.locator(f"[id='{panel}'] .jp-Cell").nth(answer).locator(".cm-content")
    editor.wait_for(state="visible", timeout=30_000)
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(_first_answer(unit))
    return answer


def _text_of(page, index: int) -> str:
    return page.evaluate(
        f"""i => {{
            const cell = {APP}.shell.currentWidget.content.widgets[i];
            return cell.model.outputs.toJSON()
                .map(o => [].concat(o.text || o.evalue || '').join('')).join('');
        }}""",
        index,
    )


def _validate(page):
    """Save and press Validate; the dialog, once nbgrader has answered."""
    run_command(page, "docmanager:save")
    return validate(page)


def test_a_learner_answers_an_exercise_and_validates(page, lab):
    _open_unit(page, lab, EXERCISE_UNIT)
    answer = _type_first_answer(page, EXERCISE_UNIT)
    page.keyboard.press("Shift+Enter")  # run the answer, move to its test
    page.keyboard.press("Shift+Enter")  # run the visible test
    _wait_idle(page)
    test_output = _text_of(page, answer + 1)
    _shot(page, "learner-visible-test")
    assert "OK" in test_output or "passed" in test_output, test_output
    dialog = _validate(page)
    _shot(dialog, "learner-validate")
    text = dialog.inner_text()
    assert "NotImplementedError" in text or "failed" in text.lower(), text


def test_a_korean_learner_works_in_a_korean_jupyterlab(page, lab_ko):
    """``make lab COURSE_LANG=ko``: JupyterLab's menus, the unit's words, the visible test, the
    reveal and Validate's check messages all speak Korean; the code is the English unit's."""
    _open_unit(page, lab_ko, KOREAN_UNIT)
    page.locator(".lm-MenuBar-itemLabel", has_text="파일").first.wait_for(timeout=60_000)
    assert "유닛 01" in page.locator(".jp-RenderedMarkdown").first.inner_text()
    answer = _type_first_answer(page, KOREAN_UNIT)
    reveal = answer + 2
    page.evaluate(
        f"async i => {{ {APP}.shell.currentWidget.content.activeCellIndex = i; }}", reveal
    )
    run_command(page, "notebook:run-all-above")
    _wait_idle(page)
    run_command(page, "notebook:run-cell")
    _wait_idle(page)
    assert "형식이 맞습니다" in _text_of(page, answer + 1)
    shown = _text_of(page, reveal)
    assert "내 예측" in shown and "맞혔습니다" in shown, shown
    _shot(page, "ko-learner-reveal")
    dialog = _validate(page)
    _shot(dialog, "ko-learner-validate")
    text = dialog.inner_text()
    assert "아직 작성하지 않았습니다" in text, text


def _first_answer(unit: str) -> str:
    """The solution of the unit's first answer cell, one line (typed as a learner would, in
    place of the whole cell: its `= None` placeholder and the stub)."""
    import nbformat

    source = nbformat.read(LAYOUT.source_notebook(unit), as_version=4)
    cell = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("solution"))
    _, _, solution = cell.source.partition("### BEGIN SOLUTION")
    solution, _, _ = solution.partition("### END SOLUTION")
    lines = [line for line in solution.splitlines() if line.strip()]
    assert len(lines) == 1, "the first answer of the unit should be one line to type"
    return lines[0]


def test_an_instructor_opens_formgrader(page, lab):
    page.goto(f"{lab['url']}/formgrader?token={TOKEN}")
    page.wait_for_selector("text=Manage Assignments", timeout=60_000)
    for unit in LAYOUT.units():
        page.wait_for_selector(f"text={unit}", timeout=60_000)
    _shot(page, "instructor-formgrader")


def test_the_exported_html_plays_with_no_kernel(page, lab):
    """As JupyterLab saves a notebook (no widget state, its default) and exports it to HTML:
    the player's self-contained HTML version is what the page shows, and it plays offline."""
    exported = lab["base"] / "export"
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
         "--allow-errors", "--ExecutePreprocessor.store_widget_state=False",
         "--output-dir", str(exported),
         str(lab["root"] / "course" / PLAYER_UNIT / f"{PLAYER_UNIT}.ipynb")],
        check=True, capture_output=True, cwd=lab["root"] / "course" / PLAYER_UNIT,
    )  # fmt: skip
    page.goto((exported / f"{PLAYER_UNIT}.html").as_uri())
    player = page.locator(".gradgraph-player").first
    player.scroll_into_view_if_needed()
    shown = player.locator("img:visible").first
    first = _shot(shown, "export-step-0")
    player.locator("button.next").click()
    page.wait_for_timeout(300)
    second = _shot(player.locator("img:visible").first, "export-step-1")
    assert first != second, "the exported player did not step"
    caption = player.locator(".caption").inner_text()
    assert caption.strip(), "the exported player shows no caption"


def test_the_exported_page_inspects_a_node_with_no_kernel(page, tmp_path):
    """Pick a node in a page made by ``to_html()`` (click its box, or the menu): the inspector
    says what the player's inspect menu says, and follows the slider."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 0.25], requires_grad=True)
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        loss = (x * w).exp().sum()
        loss.backward()
    rec.close()
    store = rec.play().frames
    labels = store.film.graph.labels
    exp = next(g for g, label in labels.items() if label == "ExpBackward0")
    saved = next(e.index for e in rec.events if e.kind.value == "saved" and e.node == exp)
    freed = next(e.index for e in rec.events if e.kind.value == "freed" and e.node == exp)
    file = tmp_path / "film.html"
    file.write_text(f"<!doctype html><meta charset='utf-8'><body>{rec.to_html()}</body>")
    page.goto(file.as_uri())
    player = page.locator(".gradgraph-player")
    facts = player.locator(".facts")
    slider = player.locator("input[type=range]")

    def go_to(step: int) -> None:
        slider.evaluate("(s, v) => { s.value = v; s.oninput(); }", step)

    go_to(saved)
    box = player.locator(f'.hit[data-node="{exp}"]')
    shown = player.locator("img:visible").bounding_box()
    hit = box.bounding_box()
    assert shown["x"] <= hit["x"] and hit["x"] + hit["width"] <= shown["x"] + shown["width"]
    assert shown["y"] <= hit["y"] and hit["y"] + hit["height"] <= shown["y"] + shown["height"]
    box.click()  # on the node's box in the picture
    assert player.locator(".inspect").input_value() == str(exp)
    assert "dashed" in box.evaluate("hit => hit.style.outline")  # picked: outlined
    assert facts.inner_text() == node_facts(store.film, exp, saved)
    assert "saved: 'result' 3 (torch.float32, 12 B, cpu)" in facts.inner_text()
    assert "made by: loss = (x * w).exp().sum()" in facts.inner_text()
    _shot(player, "export-inspector")
    go_to(freed)
    assert "12 B, cpu), freed" in facts.inner_text()
    leaf = next(g for g, label in labels.items() if label == "x")
    player.locator(".inspect").select_option(label=f"x (#{leaf})")  # or from the menu
    assert "its gradient stops here" in facts.inner_text()
    go_to(0)
    player.locator(".inspect").select_option(str(exp))
    assert facts.inner_text() == "not made yet at this step"
