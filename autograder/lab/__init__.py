"""The course's JupyterLab settings, for ``make lab`` and for a hub's user servers.

This folder is a Jupyter configuration directory: ``make lab`` puts it first on
``JUPYTER_CONFIG_PATH``, and a hub copies its two files into the course environment's
``etc/jupyter`` (docs/deploy.md). They make JupyterLab

* ask nothing on a fresh profile (``labconfig/default_setting_overrides.json``: no question
  about Jupyter's news feed, no update check), and
* open the course's notebooks trusted (``jupyter_server_config.json``: the contents manager of
  :mod:`autograder.lab.contents`).
"""

from pathlib import Path

__all__ = ["CONFIG_DIR"]

CONFIG_DIR = Path(__file__).resolve().parent
