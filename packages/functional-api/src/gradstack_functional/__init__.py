"""gradstack_functional: the functional higher-level autograd API (torch.autograd.functional).

``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp`` and ``hvp`` of functions of tensors, with
torch's signatures and return structures.  Jacobians and Hessians take ONE batched backward
pass (not one per row, pytorch#50584); ``jvp`` and ``hvp`` use forward-mode AD
(``gradstack_autograd.forward_ad``, re-exported here as ``forward_ad``).

torch.func's composable transforms (``vmap``, ``grad``, ``jacrev``, ``jacfwd``, ``hessian``,
``functional_call`` ...) are in the submodule :mod:`gradstack_functional.func`.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_functional as F
>>> def exp_adder(x, y):
...     return 2 * x.exp() + 3 * y
>>> jx, jy = F.jacobian(exp_adder, (gt.zeros(1), gt.zeros(1)))
>>> jx.tolist(), jy.tolist()
([[2.0]], [[3.0]])
"""

from gradstack_autograd import forward_ad

from .__about__ import __version__
from .functional import hessian, hvp, jacobian, jvp, vhp, vjp

# torch.autograd.functional's names; forward_ad and __version__ are attributes too
__all__ = ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"]
