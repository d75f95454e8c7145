"""nn-mini's test helpers, importable by name although the tests run with
``--import-mode=importlib`` (which keeps this folder off ``sys.path``): ``torch_like``
registers as ``gradstack_nn_tests_torch_like``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "gradstack_nn_tests_torch_like"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name("torch_like.py"))
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)
