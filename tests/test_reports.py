"""grades.csv, the feedback pages and the class report, over a small hand-made class."""

from __future__ import annotations

import csv
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.grading.results import GRADED, NOT_GRADABLE, ItemInfo, ItemResult, UnitResult
from autograder.reporting.class_report import NO_MESSAGE, reteach, summarise, write_class_report
from autograder.reporting.feedback import write_feedback
from autograder.reporting.grades_csv import spreadsheet_safe, write_grades_csv

LEAF, RETAIN = "01_leaf_tensors", "02_retain_graph"
# Notebook order puts predict_leaf first; the report must still put grads_test (fewer passes)
# first.
UNITS = {
    LEAF: [
        ItemInfo("predict_leaf", 3.0, "Predict `b.is_leaf`"),
        ItemInfo("grads_test", 2.0, "Who gets .grad"),
    ],
    RETAIN: [ItemInfo("twice_test", 4.0, "Backward twice")],
}
INJECTION = "<script>alert('x')</script> is not a tensor.\nHint: return a tensor."
NONE_GRAD = "`x.grad` is None: `x` is not a leaf."
HIDDEN_NONE_GRAD = NONE_GRAD + "\n(hidden test, fresh inputs) Hint: call x.retain_grad()."
EMPTY = "01_leaf_tensors.ipynb is empty (0 bytes): save the notebook, then submit it again."
MALFORMED = "-02_retain_graph.ipynb is not valid JSON (line 3, column 1): submit it again."
RENAMED = "graded `my copy.ipynb`: the notebook should be named `01_leaf_tensors.ipynb`"


def _leaf(student: str, predict: float, grads: float, predict_failures=(), grads_failures=()):
    items = (
        ItemResult("predict_leaf", predict, 3.0, tuple(predict_failures)),
        ItemResult("grads_test", grads, 2.0, tuple(grads_failures)),
    )
    return UnitResult(student, LEAF, GRADED, items=items, max_score=5.0)


def _retain(student: str, points: float, failures=()):
    items = (ItemResult("twice_test", points, 4.0, tuple(failures)),)
    return UnitResult(student, RETAIN, GRADED, items=items, max_score=4.0)


CLASS = [
    _retain("ada", 4.0),
    _leaf("ada", 3.0, 2.0),
    _leaf("bob", 3.0, 0.0, grads_failures=[INJECTION]),
    _retain("bob", 0.0, ["Trying to backward through the graph a second time.\nHint: ..."]),
    UnitResult(
        "=cmd",
        LEAF,
        GRADED,
        items=(
            ItemResult("predict_leaf", 1.5, 3.0, ("half credit: the dtype is right.",)),
            ItemResult("grads_test", 0.0, 2.0, (NONE_GRAD,)),
        ),
        max_score=5.0,
        notes=(RENAMED, "extra file data.csv was ignored"),
    ),
    UnitResult("=cmd", RETAIN, NOT_GRADABLE, reason=MALFORMED),
    UnitResult("dan", LEAF, NOT_GRADABLE, reason=EMPTY, max_score=5.0),
    # eve fails grads_test in the visible and the hidden test with one first line: counted once.
    _leaf("eve", 0.0, 0.0, grads_failures=[NONE_GRAD, HIDDEN_NONE_GRAD]),
]


class _Page(HTMLParser):
    """The tags a page opens and the body text a reader sees (blocks apart, spaces collapsed)."""

    _BLOCKS = {"p", "h1", "h2", "h3", "li", "td", "th", "pre", "br", "section", "title", "div"}

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[str] = []
        self._chunks: list[str] = []
        self._in_body = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_body = self._in_body or tag == "body"
        if tag in self._BLOCKS:
            self._chunks.append(" ")

    def handle_endtag(self, tag):
        if tag in self._BLOCKS:
            self._chunks.append(" ")

    def handle_data(self, data):
        if self._in_body:
            self._chunks.append(data)

    @property
    def text(self) -> str:
        return _flat("".join(self._chunks))


def _page(path: Path) -> _Page:
    return _Page(path.read_text(encoding="utf-8"))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_grades_csv_is_exact_sorted_and_spreadsheet_safe(tmp_path):
    path = tmp_path / "out" / "grades.csv"
    write_grades_csv(path, CLASS)
    assert path.read_text(encoding="utf-8") == (
        "student,unit,status,score,max_score,reason,notes\n"
        "'=cmd,01_leaf_tensors,graded,1.5,5,,"
        "graded `my copy.ipynb`: the notebook should be named `01_leaf_tensors.ipynb`; "
        "extra file data.csv was ignored\n"
        "'=cmd,02_retain_graph,not gradable,,,"
        '"\'-02_retain_graph.ipynb is not valid JSON (line 3, column 1): submit it again.",\n'
        "ada,01_leaf_tensors,graded,5,5,,\n"
        "ada,02_retain_graph,graded,4,4,,\n"
        "bob,01_leaf_tensors,graded,3,5,,\n"
        "bob,02_retain_graph,graded,0,4,,\n"
        "dan,01_leaf_tensors,not gradable,,5,"
        '"01_leaf_tensors.ipynb is empty (0 bytes): save the notebook, then submit it again.",\n'
        "eve,01_leaf_tensors,graded,0,5,,\n"
    )
    assert [p.name for p in path.parent.iterdir()] == ["grades.csv"]


def test_scores_are_written_without_float_noise(tmp_path):
    items = tuple(ItemResult(f"q{n}", 0.1, 0.1) for n in range(3))
    write_grades_csv(
        tmp_path / "g.csv",
        [UnitResult("ada", LEAF, GRADED, items=items, max_score=0.1 + 0.1 + 0.1)],
    )
    assert (tmp_path / "g.csv").read_text().splitlines()[
        1
    ] == "ada,01_leaf_tensors,graded,0.3,0.3,,"


@pytest.mark.parametrize("value", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_formula_starts_get_an_apostrophe(value):
    assert spreadsheet_safe(value) == "'" + value


def test_feedback_pages_one_per_result(tmp_path):
    written = write_feedback(tmp_path, CLASS, UNITS)
    expected = {
        "=cmd/01_leaf_tensors.html",
        "=cmd/02_retain_graph.html",
        "ada/01_leaf_tensors.html",
        "ada/02_retain_graph.html",
        "bob/01_leaf_tensors.html",
        "bob/02_retain_graph.html",
        "dan/01_leaf_tensors.html",
        "eve/01_leaf_tensors.html",
    }
    assert {p.relative_to(tmp_path).as_posix() for p in written} == expected
    on_disk = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert on_disk == expected


def test_feedback_shows_items_in_notebook_order_with_every_message(tmp_path):
    write_feedback(tmp_path, CLASS, UNITS)
    page = _page(tmp_path / "=cmd" / "01_leaf_tensors.html")
    assert page.text == _flat(
        "01_leaf_tensors: your feedback Learner: =cmd Total: 1.5 / 5 points Exercises "
        "Predict `b.is_leaf` partial: 1.5 / 3 points (predict_leaf) "
        "half credit: the dtype is right. "
        f"Who gets .grad failed: 0 / 2 points (grads_test) {NONE_GRAD} "
        f"Notes {RENAMED} extra file data.csv was ignored"
    )
    assert _flat(HIDDEN_NONE_GRAD) in _page(tmp_path / "eve" / "01_leaf_tensors.html").text
    assert (
        "passed: 3 / 3 points (predict_leaf)"
        in _page(tmp_path / "bob" / "01_leaf_tensors.html").text
    )


def test_feedback_shows_learner_html_as_text(tmp_path):
    write_feedback(tmp_path, CLASS, UNITS)
    raw = (tmp_path / "bob" / "01_leaf_tensors.html").read_text(encoding="utf-8")
    page = _Page(raw)
    assert "script" not in page.tags
    assert "<script>" not in raw
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; is not a tensor." in raw
    assert "<script>alert('x')</script> is not a tensor. Hint: return a tensor." in page.text


def test_feedback_for_a_notebook_that_could_not_be_graded(tmp_path):
    write_feedback(tmp_path, CLASS, UNITS)
    text = _page(tmp_path / "dan" / "01_leaf_tensors.html").text
    assert f"Not graded. Your notebook could not be graded: {EMPTY}" in text
    assert "What to do: fix what the message above describes and submit again." in text
    assert "Total" not in text


def test_feedback_pages_stand_alone(tmp_path):
    for path in write_feedback(tmp_path, CLASS, UNITS):
        page = _page(path)
        assert not {"link", "script", "img", "iframe"} & set(page.tags), path
        assert '<meta name="viewport"' in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("student", ["..", ".", "", "a/b", "..\\x", "a\0b"])
def test_feedback_refuses_unsafe_student_ids_before_writing(tmp_path, student):
    bad = UnitResult(student, LEAF, NOT_GRADABLE, reason=EMPTY)
    with pytest.raises(ValueError, match="cannot be used as a folder name"):
        write_feedback(tmp_path / "feedback", [CLASS[0], bad], UNITS)
    assert not (tmp_path / "feedback").exists()


def test_feedback_refuses_two_results_for_one_page(tmp_path):
    with pytest.raises(ValueError, match="share a feedback page"):
        write_feedback(tmp_path, [CLASS[0], CLASS[0]], UNITS)


def test_a_result_graded_against_other_items_is_refused(tmp_path):
    stale = _retain("ada", 4.0)
    with pytest.raises(ValueError, match=r"ada/01_leaf_tensors: the result has items"):
        write_feedback(tmp_path, [UnitResult("ada", LEAF, GRADED, items=stale.items)], UNITS)


def test_summary_numbers():
    leaf, retain = summarise(CLASS, UNITS)
    assert (leaf.unit, leaf.max_score, leaf.scores) == (LEAF, 5.0, (0.0, 1.5, 3.0, 5.0))
    assert (leaf.mean, leaf.median) == (2.375, 2.25)
    assert leaf.not_gradable == (("dan", EMPTY),)
    assert [(i.grade_id, i.passed, i.graded, i.pass_rate) for i in leaf.items] == [
        ("grads_test", 1, 4, 0.25),
        ("predict_leaf", 2, 4, 0.5),
    ]
    assert leaf.items[0].top_failures == ((NONE_GRAD, 2), (INJECTION.splitlines()[0], 1))
    assert leaf.items[1].top_failures == ((NO_MESSAGE, 1), ("half credit: the dtype is right.", 1))
    assert (retain.scores, retain.not_gradable) == ((0.0, 4.0), (("=cmd", MALFORMED),))
    assert [i.grade_id for i in reteach([leaf, retain])] == [
        "grads_test",
        "predict_leaf",
        "twice_test",
    ]
    assert reteach([leaf, retain], count=1) == [leaf.items[0]]


def test_units_only_results_name_come_last():
    stray = UnitResult("ada", "99_unknown", NOT_GRADABLE, reason="`99_unknown` is not a unit")
    summaries = summarise([*CLASS, stray], UNITS)
    assert [s.unit for s in summaries] == [LEAF, RETAIN, "99_unknown"]
    assert summaries[-1].not_gradable == (("ada", "`99_unknown` is not a unit"),)


def test_report_shows_pass_rates_messages_and_reteach_first(tmp_path):
    path = tmp_path / "report.html"
    write_class_report(path, CLASS, UNITS, sandboxed=True, title="Autograd course, week 3")
    page = _page(path)
    text = page.text
    assert "script" not in page.tags
    assert "Autograd course, week 3" in text
    assert "5 learner(s); 6 notebook(s) graded, 2 not gradable." in text
    reteach_list = text[text.index("Re-teach next lecture") : text.index(f" {LEAF} 4 graded")]
    assert reteach_list == _flat(
        "Re-teach next lecture "
        f"Who gets .grad ({LEAF}, grads_test): passed by 25% (1 of 4); "
        f"most common failure: {NONE_GRAD} "
        f"Predict `b.is_leaf` ({LEAF}, predict_leaf): passed by 50% (2 of 4); "
        f"most common failure: {NO_MESSAGE} "
        f"Backward twice ({RETAIN}, twice_test): passed by 50% (1 of 2); "
        "most common failure: Trying to backward through the graph a second time."
    )
    assert f"{LEAF} 4 graded, 1 not gradable. Mean 2.38, median 2.25 of 5 points." in text
    table = text[text.index("Item Points Passed") : text.index("Not gradable dan")].strip()
    assert table == _flat(
        "Item Points Passed Most common failure messages "
        f"Who gets .grad grads_test 2 25% (1 of 4) {NONE_GRAD} (2 learner(s)) "
        f"{INJECTION.splitlines()[0]} (1 learner(s)) "
        f"Predict `b.is_leaf` predict_leaf 3 50% (2 of 4) {NO_MESSAGE} (1 learner(s)) "
        "half credit: the dtype is right. (1 learner(s))"
    )
    assert f"Not gradable dan: {EMPTY}" in text
    assert f"Not gradable =cmd: {MALFORMED}" in text
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in path.read_text(encoding="utf-8")


def test_report_histogram_counts_every_score(tmp_path):
    path = tmp_path / "report.html"
    write_class_report(path, CLASS, UNITS, sandboxed=True)
    raw = path.read_text(encoding="utf-8")
    leaf_chart = raw[raw.index("Score distribution of 01_leaf_tensors</title>") :]
    leaf_chart = leaf_chart[: leaf_chart.index("</svg>")]
    assert [line.strip() for line in leaf_chart.splitlines() if "learner(s) scored" in line] == [
        "<title>1 learner(s) scored 0 to under 1</title>",
        "<title>1 learner(s) scored 1 to under 2</title>",
        "<title>0 learner(s) scored 2 to under 3</title>",
        "<title>1 learner(s) scored 3 to under 4</title>",
        "<title>0 learner(s) scored 4 to under 5</title>",
        "<title>1 learner(s) scored 5 or more</title>",
    ]


def test_report_histogram_widens_bars_for_a_long_unit(tmp_path):
    units = {"long": [ItemInfo("all", 45.0, "Everything")]}
    results = [
        UnitResult(name, "long", GRADED, items=(ItemResult("all", points, 45.0),))
        for name, points in [("a", 0.0), ("b", 44.5), ("c", 45.0), ("d", 45.0)]
    ]
    path = tmp_path / "report.html"
    write_class_report(path, results, units, sandboxed=True)
    raw = path.read_text(encoding="utf-8")
    titles = [line.strip() for line in raw.splitlines() if "learner(s) scored" in line]
    assert len(titles) == 16
    assert titles[0] == "<title>1 learner(s) scored 0 to under 3</title>"
    assert titles[14] == "<title>1 learner(s) scored 42 to under 45</title>"
    assert titles[15] == "<title>2 learner(s) scored 45 or more</title>"


@pytest.mark.parametrize(
    ("sandboxed", "one_result_unsandboxed", "banner"),
    [(True, False, False), (False, False, True), (True, True, True)],
)
def test_banner_only_when_graded_without_a_sandbox(
    tmp_path, sandboxed, one_result_unsandboxed, banner
):
    results = list(CLASS)
    if one_result_unsandboxed:
        results[0] = UnitResult(**{**results[0].__dict__, "sandboxed": False})
    path = tmp_path / "report.html"
    write_class_report(path, results, UNITS, sandboxed=sandboxed)
    text = _page(path).text
    assert ("Graded WITHOUT a sandbox: learner code ran with your rights" in text) is banner
    if banner:
        assert text.index("WITHOUT a sandbox") < text.index("Class report 5 learner(s)")


def test_report_is_the_same_on_a_second_run(tmp_path):
    write_class_report(tmp_path / "one.html", CLASS, UNITS, sandboxed=True)
    write_class_report(tmp_path / "two.html", list(reversed(CLASS)), UNITS, sandboxed=True)
    assert (tmp_path / "one.html").read_bytes() == (tmp_path / "two.html").read_bytes()


def test_grades_csv_round_trips_through_a_csv_reader(tmp_path):
    reason = 'line one, with "quotes"\nline two'
    write_grades_csv(tmp_path / "g.csv", [UnitResult("ada", LEAF, NOT_GRADABLE, reason=reason)])
    with (tmp_path / "g.csv").open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert rows == [
        {
            "student": "ada",
            "unit": LEAF,
            "status": NOT_GRADABLE,
            "score": "",
            "max_score": "",
            "reason": reason,
            "notes": "",
        }
    ]


def test_report_cuts_a_huge_failure_line(tmp_path):
    huge = "x" * 10_000
    results = [_leaf("ada", 3.0, 0.0, grads_failures=[huge])]
    [leaf, _] = summarise(results, UNITS)
    [(message, count)] = leaf.items[0].top_failures
    assert (message, len(message), count) == ("x" * 199 + "…", 200, 1)


def test_report_lists_submissions_to_review_and_checks_judged_inside(tmp_path):
    flagged = UnitResult(
        "eve",
        LEAF,
        GRADED,
        items=(
            ItemResult("grads_test", 0.0, 3.0, failures=("voided",)),
            ItemResult("predict_leaf", 2.0, 2.0),
        ),
        review=("cell 3: torch.Tensor.__sub__ = lambda a, b: a",),
    )
    path = tmp_path / "report.html"
    judged = {f"{LEAF} grads_test": ["x.grad"]}
    write_class_report(path, [*CLASS, flagged], UNITS, sandboxed=True, judged_inside=judged)
    text = _page(path).text
    review = text[text.index("For review") :]
    assert "eve" in review and "torch.Tensor.__sub__ = lambda a, b: a" in review
    assert "ada" not in review
    assert f"{LEAF} grads_test: x.grad" in text[text.index("judged inside") :]
