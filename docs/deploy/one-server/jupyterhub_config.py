"""JupyterHub on one server for the course, in the style of The Littlest JupyterHub.

Learners log in with their account on the server (PAM), and each gets a JupyterLab run as
that account from the course environment, a virtual environment every account can read
(``/opt/autograd-course/venv``; docs/deploy.md says how to make it). nbgrader's exchange is one
folder every account can write (``nbgrader_config.py`` beside this file). The instructors grade
in formgrader, a service of the hub run as the grader account that owns the course repository
(nbgrader's "One Class, Multiple Graders"); the servers the hub starts for its users read the
learners' settings first (``learner/`` beside this file, installed as
``/opt/autograd-course/learner``), which turn nbgrader's instructor tools off there. A class
taught in Korean sets ``AUTOGRAD_COURSE_LANG=ko``: JupyterLab's own menus in Korean too.

tests/test_hub.py starts a hub with this file; it changes only what the environment variables
below name (where things are on the test machine), and on the command line the ports and the
hub's own state files.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)

# Where things are: the defaults are the deployment's; the test sets its own.
PREFIX = Path(os.environ.get("AUTOGRAD_PREFIX", "/opt/autograd-course"))
GRADER = os.environ.get("AUTOGRAD_GRADER", "grader-autograd")
GROUP = os.environ.get("AUTOGRAD_GROUP", "autograd")  # the Unix group of the class's accounts
COURSE_ROOT = os.environ.get("AUTOGRAD_COURSE_ROOT", f"/home/{GRADER}/autograd-course")
INSTRUCTORS = set(os.environ.get("AUTOGRAD_INSTRUCTORS", "").split())
FORMGRADER_URL = os.environ.get("AUTOGRAD_FORMGRADER_URL", "http://127.0.0.1:9999")
LANGUAGE = os.environ.get("AUTOGRAD_COURSE_LANG", "en")  # the class's language: en or ko
COURSE_ID = "autograd"
PYTHON = str(PREFIX / "venv" / "bin" / "python")

# Who may log in: the accounts of the class's group, with their password (PAM).
c.JupyterHub.authenticator_class = "pam"
c.LocalAuthenticator.allowed_groups = {GROUP}
c.Authenticator.admin_users = INSTRUCTORS
c.PAMAuthenticator.open_sessions = False  # no login session per server (as TLJH)

# Each learner's JupyterLab: the course environment, run as the learner (the hub runs as root).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# nbgrader's table for a class with a formgrader service ("One Class, Multiple Graders"): no
# formgrader, course list or create-assignment in the users' own servers, only the assignment
# list and validation; JUPYTER_CONFIG_PATH is read before the environment's etc/jupyter, which
# turns every nbgrader extension on (the formgrader service keeps them). A class in another
# language reads learner/LANG first: autograder/lab/LANG, JupyterLab's own UI in that language.
LEARNER = PREFIX / "learner"
if LANGUAGE != "en" and not (LEARNER / LANGUAGE).is_dir():
    raise ValueError(
        f"AUTOGRAD_COURSE_LANG={LANGUAGE}: no {LEARNER / LANGUAGE} (docs/deploy.md installs "
        "autograder/lab/LANG there; the course's languages are the folders of autograder/lab)"
    )
LEARNER_CONFIG = [*([LEARNER / LANGUAGE] if LANGUAGE != "en" else []), LEARNER]
c.Spawner.environment = {
    "PATH": f"{PREFIX / 'venv' / 'bin'}:/usr/bin:/bin",
    "JUPYTER_CONFIG_PATH": os.pathsep.join(str(path) for path in LEARNER_CONFIG),
}
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120

# formgrader for the instructors: a server run as the grader account in the course repository.
c.JupyterHub.services = [
    {
        "name": COURSE_ID,
        "url": FORMGRADER_URL,
        "command": [PYTHON, "-m", "jupyterhub.singleuser", "--debug"],
        "user": GRADER,
        "cwd": str(Path(COURSE_ROOT).parent),
        "environment": {
            "JUPYTERHUB_DEFAULT_URL": "/formgrader",
            "PATH": f"{PREFIX / 'venv' / 'bin'}:/usr/bin:/bin",
            # the course's own nbgrader configuration (solutions/ is the source, course/ the
            # release), besides the environment's (the course id and the exchange)
            "JUPYTER_CONFIG_PATH": str(Path(COURSE_ROOT) / "autograder"),
        },
        "oauth_no_confirm": True,
    }
]
c.JupyterHub.load_groups = {f"formgrade-{COURSE_ID}": {"users": sorted(INSTRUCTORS)}}
c.JupyterHub.load_roles = [
    {
        "name": f"formgrade-{COURSE_ID}",
        "groups": [f"formgrade-{COURSE_ID}"],
        "scopes": [f"access:services!service={COURSE_ID}"],
    },
]
