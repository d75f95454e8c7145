"""nn-mini's test helpers, importable by name although the tests run with
``--import-mode=importlib`` (which keeps this folder off ``sys.path``): ``torch_like``
registers as ``gradstack_nn_tests_torch_like``, ``oracle`` (the comparisons with torch the
family tests share) as ``gradstack_nn_tests_oracle``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

for _helper in ("torch_like", "oracle"):  # (oracle imports torch_like: first)
    _name = f"gradstack_nn_tests_{_helper}"
    if _name not in sys.modules:
        _spec = importlib.util.spec_from_file_location(
            _name, Path(__file__).with_name(f"{_helper}.py")
        )
        _module = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = _module
        _spec.loader.exec_module(_module)
