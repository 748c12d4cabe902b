"""The deployment guide's files (docs/deploy/) are the ones it describes and the ones the suite
runs: the one-server hub configuration loads with the guide's defaults (tests/test_hub.py runs
it), the learners' settings turn nbgrader's instructor tools off for the users' servers only, a
class taught in Korean gets JupyterLab in Korean and its units released from course/ko under
the English units' names (nbgrader's own release, fetch, submit and collect), nbgrader's
configuration names the course and the exchange, and the Kubernetes files parse and hold every
key the guide relies on, with the course's own JupyterLab settings."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest
import yaml
from jupyter_core.paths import jupyter_config_path
from jupyter_server.extension.config import ExtensionConfigManager
from jupyter_server.services.config.manager import ConfigManager
from traitlets.config import PyFileConfigLoader

from autograder.i18n import NOTEBOOK_KEY, notebook_language
from tests.conftest import LAYOUT, ROOT
from tests.hub_environment import install_learner_settings

DEPLOY = ROOT / "docs" / "deploy"
GUIDE = ROOT / "docs" / "deploy.md"
LAB = ROOT / "autograder" / "lab"
_HUB_VARIABLES = (
    "AUTOGRAD_PREFIX", "AUTOGRAD_GRADER", "AUTOGRAD_GROUP", "AUTOGRAD_COURSE_ROOT",
    "AUTOGRAD_INSTRUCTORS", "AUTOGRAD_FORMGRADER_URL", "AUTOGRAD_COURSE_LANG",
)  # fmt: skip
# nbgrader's table for students beside a formgrader service: no formgrader, no course list, no
# create-assignment; the assignment list and validation stay.
_OFF_SERVER = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
_ON_SERVER = ("nbgrader.server_extensions.assignment_list",
              "nbgrader.server_extensions.validate_assignment")  # fmt: skip
_OFF_LAB = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
            "@jupyter/nbgrader:create-assignment")  # fmt: skip


def _load(path):
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def _yaml(name):
    return list(yaml.safe_load_all((DEPLOY / "kubernetes" / name).read_text(encoding="utf-8")))


def test_the_guide_links_every_file_it_gives():
    guide = GUIDE.read_text(encoding="utf-8")
    files = sorted(p.relative_to(DEPLOY.parent) for p in DEPLOY.rglob("*") if p.is_file())
    assert files, "docs/deploy/ holds no file"
    for path in files:
        assert f"]({path.as_posix()})" in guide, f"docs/deploy.md does not link {path}"


def test_the_one_server_hub_config_with_the_guides_defaults(monkeypatch):
    for name in _HUB_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AUTOGRAD_INSTRUCTORS", "prof1 prof2")
    config = _load(DEPLOY / "one-server" / "jupyterhub_config.py")
    python = "/opt/autograd-course/venv/bin/python"
    assert config.JupyterHub.authenticator_class == "pam"
    assert config.LocalAuthenticator.allowed_groups == {"autograd"}
    assert config.Authenticator.admin_users == {"prof1", "prof2"}
    assert config.JupyterHub.spawner_class == "localprocess"
    assert config.Spawner.cmd == [python, "-m", "jupyterhub.singleuser"]
    # the users' servers read the learners' settings, where the guide's install puts them
    assert config.Spawner.environment["JUPYTER_CONFIG_PATH"] == "/opt/autograd-course/learner"
    [service] = config.JupyterHub.services
    assert (service["name"], service["user"], service["command"][0]) == (
        "autograd",
        "grader-autograd",
        python,
    )
    assert service["environment"]["JUPYTER_CONFIG_PATH"] == (
        "/home/grader-autograd/autograd-course/autograder"
    )
    [role] = config.JupyterHub.load_roles
    assert role["scopes"] == ["access:services!service=autograd"]
    assert config.JupyterHub.load_groups["formgrade-autograd"]["users"] == ["prof1", "prof2"]
    # the course's nbgrader configuration the service reads exists in the repository
    assert (ROOT / "autograder" / "nbgrader_config.py").is_file()


def test_the_guide_installs_the_learners_settings_where_the_hub_reads_them():
    guide = GUIDE.read_text(encoding="utf-8")
    assert "cp -r docs/deploy/one-server/learner /opt/autograd-course/learner" in guide
    assert "cp -r autograder/lab/ko /opt/autograd-course/learner/ko" in guide


def test_the_learners_settings_turn_the_instructor_tools_off_for_learners_only(
    tmp_path, monkeypatch
):
    """What the learners' servers and the formgrader service each enable, read as Jupyter
    Server and JupyterLab read it: the learners' folder first, then this environment's
    ``etc/jupyter``, where nbgrader's own file turns every nbgrader extension on."""
    learner = ROOT / "docs" / "deploy" / "one-server" / "learner"
    server = json.loads((learner / "jupyter_server_config.json").read_text(encoding="utf-8"))
    page = json.loads((learner / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    assert set(server["ServerApp"]["jpserver_extensions"]) == set(_OFF_SERVER)
    assert set(page["disabledExtensions"]) == set(page["lockedExtensions"]) == set(_OFF_LAB)
    for module in (*_OFF_SERVER, *_ON_SERVER):  # the names are nbgrader 0.9.6's
        assert importlib.util.find_spec(module) is not None, module
    monkeypatch.setenv("HOME", str(tmp_path))  # no settings of this machine's user
    monkeypatch.delenv("JUPYTER_CONFIG_DIR", raising=False)

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(install_learner_settings(tmp_path)))
    enabled = ExtensionConfigManager(read_config_path=jupyter_config_path())
    assert [name for name in (*_OFF_SERVER, *_ON_SERVER) if enabled.enabled(name)] == list(
        _ON_SERVER
    )
    disabled = ConfigManager(config_dir_name="labconfig").get("page_config")["disabledExtensions"]
    assert {name for name, off in disabled.items() if off} >= set(_OFF_LAB)

    # the formgrader service reads the course's folder and the environment's, not learner/
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(ROOT / "autograder"))
    enabled = ExtensionConfigManager(read_config_path=jupyter_config_path())
    assert all(enabled.enabled(name) for name in (*_OFF_SERVER, *_ON_SERVER))
    disabled = ConfigManager(config_dir_name="labconfig").get("page_config")
    assert not set(_OFF_LAB) & set(disabled.get("disabledExtensions", {}))


def test_a_korean_class_gets_jupyterlab_in_korean(tmp_path, monkeypatch):
    """AUTOGRAD_COURSE_LANG=ko puts the install's copy of autograder/lab/ko before the learners'
    settings: JupyterLab's language is Korean (its language pack is in the environment) and the
    instructor tools stay off. A language the install has no folder for stops the hub."""
    for name in _HUB_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    install_learner_settings(tmp_path)
    monkeypatch.setenv("AUTOGRAD_PREFIX", str(tmp_path))
    monkeypatch.setenv("AUTOGRAD_COURSE_LANG", "ko")
    config = _load(DEPLOY / "one-server" / "jupyterhub_config.py")
    paths = config.Spawner.environment["JUPYTER_CONFIG_PATH"]
    assert paths.split(os.pathsep) == [str(tmp_path / "learner" / "ko"), str(tmp_path / "learner")]

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", paths)
    labconfig = ConfigManager(config_dir_name="labconfig")
    overrides = labconfig.get("default_setting_overrides")
    assert overrides["@jupyterlab/translation-extension:plugin"]["locale"] == "ko_KR"
    assert set(_OFF_LAB) <= set(labconfig.get("page_config")["disabledExtensions"])
    assert importlib.util.find_spec("jupyterlab_language_pack_ko_KR") is not None

    monkeypatch.setenv("AUTOGRAD_COURSE_LANG", "fr")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "learner" / "fr"))):
        _load(DEPLOY / "one-server" / "jupyterhub_config.py")


KOREAN_RELEASE = "--CourseDirectory.release_directory=course/ko"


def test_a_korean_class_is_released_and_collected_as_the_english_units(tmp_path):
    """The guide's release of a Korean class, run with nbgrader's own commands: the course's
    configuration, the unit released from course/ko into an exchange, fetched and submitted by
    a learner, collected by the instructor. What reaches ``submitted/`` is the Korean notebook,
    under the English unit's name, with the English notebook's grade ids and checksums; the
    class grader reads its language from it (tests/test_notebooks.py grades such notebooks)."""
    unit = "01_leaf_tensors"
    guide = GUIDE.read_text(encoding="utf-8")
    command = rf"nbgrader release_assignment {unit} \\\n\s+{re.escape(KOREAN_RELEASE)}\n"
    assert re.search(command, guide), "the guide's release of a Korean class is not this one"
    exchange, learner, course = (tmp_path / name for name in ("exchange", "learner", "course"))
    for folder in (exchange, learner, course, tmp_path / "config"):
        folder.mkdir()
    (tmp_path / "config" / "nbgrader_config.py").write_text(  # the environment's, in the guide
        "c = get_config()  # noqa: F821\n"
        "c.CourseDirectory.course_id = 'autograd'\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
    environment = {
        "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "JUPYTER_CONFIG_PATH": f"{ROOT / 'autograder'}{os.pathsep}{tmp_path / 'config'}",
    }

    def nbgrader(*arguments, cwd):
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", *arguments],
            cwd=cwd, env=environment, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"nbgrader {' '.join(arguments)}:\n{done.stderr}"

    nbgrader("release_assignment", unit, KOREAN_RELEASE, cwd=ROOT)
    released = exchange / "autograd" / "outbound" / unit / f"{unit}.ipynb"
    korean = LAYOUT.learner_notebook(unit, "ko")
    assert released.read_bytes() == korean.read_bytes()
    nbgrader("fetch_assignment", unit, cwd=learner)
    nbgrader("submit", unit, cwd=learner)
    root = f"--CourseDirectory.root={course}"
    nbgrader("collect", unit, root, cwd=course)
    [collected] = (course / "submitted").glob(f"*/{unit}/{unit}.ipynb")
    assert collected.read_bytes() == korean.read_bytes()

    def graded_cells(path):
        notebook = nbformat.read(path, as_version=4)
        cells = [cell.metadata["nbgrader"] for cell in notebook.cells
                 if cell.metadata.get("nbgrader", {}).get("grade_id")]  # fmt: skip
        return notebook, [(m["grade_id"], m.get("checksum"), m.get("points")) for m in cells]

    submitted, cells = graded_cells(collected)
    english, english_cells = graded_cells(LAYOUT.learner_notebook(unit))
    assert cells == english_cells and any(checksum for _, checksum, _ in cells)
    assert notebook_language(submitted.metadata) == "ko"
    assert notebook_language(english.metadata) == "en"
    assert submitted.metadata[NOTEBOOK_KEY]["unit"] == unit


def test_nbgrader_config_names_the_course_and_the_exchange_beside_the_environment():
    config = _load(DEPLOY / "one-server" / "nbgrader_config.py")
    assert config.CourseDirectory.course_id == "autograd"
    assert config.Exchange.root.endswith("exchange")


def test_the_kubernetes_files_hold_what_the_guide_relies_on():
    [values] = _yaml("config.yaml")
    singleuser = values["singleuser"]
    assert singleuser["image"]["name"] and singleuser["defaultUrl"] == "/lab/tree/course"
    hook = singleuser["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert "/srv/autograd-course/course" in hook[-1]
    [mount] = singleuser["storage"]["extraVolumeMounts"]
    [volume] = singleuser["storage"]["extraVolumes"]
    assert mount["name"] == volume["name"] and mount["mountPath"] == "/srv/nbgrader/exchange"
    files = singleuser["extraFiles"]
    nbgrader = files["nbgrader-config"]["stringData"]
    assert 'course_id = "autograd"' in nbgrader and '"/srv/nbgrader/exchange"' in nbgrader
    # the course's JupyterLab settings are autograder/lab's, word for word
    overrides = json.loads((LAB / "labconfig" / "default_setting_overrides.json").read_text())
    server = json.loads((LAB / "jupyter_server_config.json").read_text())
    assert files["lab-settings"]["data"] == overrides
    assert files["course-contents"]["data"] == server
    # learners' servers without the instructor tools: the one-server hub's learner files
    learner = DEPLOY / "one-server" / "learner"
    assert singleuser["extraEnv"]["JUPYTER_CONFIG_PATH"] == "/etc/jupyter/learner"
    for key, name in (("learner-server", "jupyter_server_config.json"),
                      ("learner-lab", "labconfig/page_config.json")):  # fmt: skip
        assert files[key]["mountPath"] == f"/etc/jupyter/learner/{name}"
        assert files[key]["data"] == json.loads((learner / name).read_text(encoding="utf-8"))

    [claim] = _yaml("exchange-pvc.yaml")
    assert claim["kind"] == "PersistentVolumeClaim"
    assert claim["metadata"]["name"] == volume["persistentVolumeClaim"]["claimName"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]

    [pod] = _yaml("grader-pod.yaml")
    assert pod["spec"]["hostUsers"] is False
    [grader] = pod["spec"]["containers"]
    security = grader["securityContext"]
    assert security["procMount"] == "Unmasked"
    assert security["seccompProfile"]["type"] == "Unconfined"
    assert security["appArmorProfile"]["type"] == "Unconfined"
    database = next(e["value"] for e in grader["env"] if e["name"] == "AUTOGRAD_DB")
    assert database.startswith("postgresql+psycopg://")
    assert "make grade" in grader["command"][-1]


def test_the_guides_yaml_snippets_are_in_the_files():
    """Each YAML block of the guide's Kubernetes section is part of one of the files."""
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide[guide.index("## 2. JupyterHub on Kubernetes") : guide.index("## 3.")]
    documents = [d for name in ("config.yaml", "exchange-pvc.yaml") for d in _yaml(name)]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        snippet = yaml.safe_load(block)
        assert any(_within(snippet, document) for document in documents), block[:200]


def _within(part, whole) -> bool:
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            key in whole and _within(value, whole[key]) for key, value in part.items()
        )
    return part == whole
