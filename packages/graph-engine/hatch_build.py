"""Hatchling build hook: compile every ``src/**/*.pyx`` with Cython and setuptools' build_ext.

The same file sits in every Cython package of the monorepo (``tests/test_workspace.py``
checks that the copies match).  Options, all optional, come from
``[tool.hatch.build.targets.wheel.hooks.custom]``::

    cython-include = ["../tensor-core/src"]   # extra dirs searched for cimported .pxd files
    cython-directives = {boundscheck = false}
    extra-compile-args = ["-O3"]
    openmp = true                             # compile and link with -fopenmp

Note [In-place builds]
~~~~~~~~~~~~~~~~~~~~~~
Extensions are built *in place* (next to the ``.pyx``, under ``src/``).  That lets one hook
serve ``pip install .`` and ``hatch build`` (the ``.so`` files are force-included into the
wheel, which then gets a ``cp3XX-cp3XX-<platform>`` tag) and ``pip install -e .`` (the
editable ``.pth`` points at ``src/``, where the ``.so`` files already are).  Editable
installs do not recompile on import: ``hatch run rebuild`` does, and every test command
runs it first.
"""

from __future__ import annotations

import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


@contextmanager
def _chdir(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class CythonBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":  # the sdist ships .pyx/.pxd sources only
            return

        import numpy
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension

        root = Path(self.root).resolve()
        src = root / "src"
        pyx_files = sorted(src.rglob("*.pyx"))
        if not pyx_files:
            return

        include_path = [str(src)]
        for entry in self.config.get("cython-include", []):
            path = (root / entry).resolve()
            if path.is_dir():  # a sibling package inside the monorepo checkout
                include_path.append(str(path))
        # Outside the monorepo, .pxd files of installed packages are found on sys.path.

        directives = {"language_level": 3, "embedsignature": True}
        directives.update(self.config.get("cython-directives", {}))
        compile_args = list(self.config.get("extra-compile-args", ["-O3"]))
        link_args: list[str] = []
        if self.config.get("openmp", False):
            compile_args.append("-fopenmp")
            link_args.append("-fopenmp")

        extensions = [
            Extension(
                ".".join(pyx.relative_to(src).with_suffix("").parts),
                [str(pyx.relative_to(root))],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=compile_args,
                extra_link_args=link_args,
            )
            for pyx in pyx_files
        ]

        with _chdir(root), warnings.catch_warnings():
            # setuptools warns "setup.py install is deprecated" when build_ext is driven directly
            warnings.simplefilter("ignore")
            ext_modules = cythonize(
                extensions,
                include_path=include_path,
                compiler_directives=directives,
                quiet=True,
            )
            dist = Distribution({"ext_modules": ext_modules, "package_dir": {"": "src"}})
            cmd = dist.get_command_obj("build_ext")
            cmd.inplace = True
            cmd.build_temp = str(root / "build" / f"temp-{sys.implementation.cache_tag}")
            cmd.ensure_finalized()
            cmd.run()
            outputs = [(root / cmd.get_ext_fullpath(ext.name)).resolve() for ext in ext_modules]

        build_data["pure_python"] = False
        build_data["infer_tag"] = True  # -> cp311-cp311-linux_x86_64
        if version != "editable":
            # The in-place .so files are git-ignored, so hatchling would skip them: force them
            # into the wheel (build_data["artifacts"] would be matched against wheel paths).
            for out in outputs:
                build_data["force_include"][str(out)] = out.relative_to(src).as_posix()
