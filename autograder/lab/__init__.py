"""The course's JupyterLab settings, for ``make lab`` and for a hub's user servers.

This folder is a Jupyter configuration directory: ``make lab`` puts it first on
``JUPYTER_CONFIG_PATH``, and a hub copies its two files into the course environment's
``etc/jupyter`` (docs/deploy.md). They make JupyterLab

* ask nothing on a fresh profile (``labconfig/default_setting_overrides.json``: no question
  about Jupyter's news feed, no update check), and
* open the course's notebooks trusted (``jupyter_server_config.json``: the contents manager of
  :mod:`autograder.lab.contents`).

A subfolder per translation (``ko/``) is a configuration directory too: ``make lab
COURSE_LANG=ko`` puts it before this one, and its ``labconfig`` makes JupyterLab's own menus and
dialogs speak that language (the language pack is a dependency of the course).
"""

from pathlib import Path

__all__ = ["CONFIG_DIR"]

CONFIG_DIR = Path(__file__).resolve().parent
