"""asv plugin: the benchmark environments made by uv (``"environment_type":
"virtualenv-uv"`` in asv.conf.json, which loads this module as the plugin ``.tools.asv_env``).

Note [asv's environments are made by uv]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
asv's ``virtualenv`` environment runs pip once to update pip and wheel and then once per
requirement (the matrix's numpy, Cython, setuptools and hatchling, and asv's own build,
asv_runner and pympler, and the root pyproject's build requirement): nine pip processes,
each starting pip (about a second of CPU) and asking the index again; a fresh clone spent
about 10 s of CPU and more of waiting there before the first build.  This environment is
asv's ``virtualenv`` (same name scheme, same Python lookup, same pins) made by uv instead:
``uv venv`` and one ``uv pip install`` of every requirement, whose wheels come from uv's
cache, where hatch's uv put the same numpy a moment earlier when it made the ``asv``
environment itself.  As in the other hatch environments (Note [uv, and where torch comes
from] in pyproject.toml), pip's find-links are handed to uv.  Without ``uv`` on the PATH
it is asv's ``virtualenv`` unchanged.  The environment has no pip: ``tools/asv_build.py``
installs and uninstalls the wheels with uv too (with pip where uv is missing).
"""

from __future__ import annotations

import os
import shutil

from asv import util
from asv.console import log
from asv.plugins.virtualenv import Virtualenv


def uv_command() -> str | None:
    """The ``uv`` executable on the PATH (hatch installs it with itself), or None."""
    return shutil.which("uv")


class VirtualenvUv(Virtualenv):
    """asv's ``virtualenv`` environment, made and filled by uv."""

    tool_name = "virtualenv-uv"

    def _requirement_specs(self) -> list[str] | None:
        """The requirements as uv takes them, or None for a declaration this plugin does
        not translate (pip's own options): then pip installs them as asv would."""
        specs = []
        for key, value in {**self._requirements, **self._base_requirements}.items():
            name = key[4:] if key.startswith("pip+") else key
            value = (value or "").strip()
            if name.startswith("-") or value.startswith("-") or " " in value:
                return None
            if not value:
                specs.append(name)
            elif value[0] in "<>=!~":
                specs.append(f"{name}{value}")
            else:
                specs.append(f"{name}=={value}")
        return specs

    def _uv_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.build_env_vars)
        if env.get("PIP_FIND_LINKS") and not env.get("UV_FIND_LINKS"):
            env["UV_FIND_LINKS"] = env["PIP_FIND_LINKS"]
        return env

    def _setup(self) -> None:
        uv = uv_command()
        if uv is None:
            super()._setup()
            return
        log.info(f"Creating a virtualenv with uv for {self.name}")
        env = self._uv_env()
        util.check_call([uv, "venv", "--quiet", "--python", self._executable, self._path], env=env)
        log.info(f"Installing requirements with uv for {self.name}")
        self._install_requirements()

    def _install_requirements(self) -> None:
        uv, specs = uv_command(), self._requirement_specs()
        python = os.path.join(self._path, "bin", "python")
        if uv is None or specs is None or not os.path.exists(python):
            super()._install_requirements()
            return
        # bytecode compiled at install, as pip does (Note [Bytecode is compiled once] in
        # pyproject.toml: these machines set PYTHONDONTWRITEBYTECODE)
        cmd = [uv, "pip", "install", "--compile-bytecode", "--python", python, *specs]
        util.check_call(cmd, env=self._uv_env())
