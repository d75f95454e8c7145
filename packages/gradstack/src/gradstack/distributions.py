"""``gradstack.distributions``: ``torch.distributions`` from gradstack-nn-mini
(``gradstack_nn.distributions``), with its submodules under torch's names
(``gradstack.distributions.constraints``, ``.transforms``, ``.kl``, ``.normal`` ...), so
that ``from torch.distributions.normal import Normal`` runs unchanged."""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys

import gradstack_nn.distributions as _impl
from gradstack_nn.distributions import *  # noqa: F403
from gradstack_nn.distributions import __all__  # noqa: F401

# the public submodules are the implementation's own module objects (one class each, not
# copies), registered as this module's submodules so that the import system finds them
for _info in _pkgutil.iter_modules(_impl.__path__):
    if not _info.name.startswith("_"):
        _module = _importlib.import_module(f"{_impl.__name__}.{_info.name}")
        _sys.modules[f"{__name__}.{_info.name}"] = _module
        globals()[_info.name] = _module
