"""``gradstack.autograd.gradcheck``: numerical gradient checks."""

from gradstack_autograd.gradcheck import *  # noqa: F403
from gradstack_autograd.gradcheck import __all__  # noqa: F401
