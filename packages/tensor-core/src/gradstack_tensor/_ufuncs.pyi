"""Type stub of ``gradstack_tensor._ufuncs``: numpy's ufuncs with torch's rules."""

from collections.abc import Callable
from typing import Any

def quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
