"""``gradstack.autograd.graph``: ``Node``, saved-tensor hooks (``saved_tensors_hooks``,
``save_on_cpu`` ...), ``register_multi_grad_hook``, gradient edges, and pictures of a
backward graph (``make_dot``, ``render_dot``: torchviz's call, Graphviz's rendering)."""

from gradstack_autograd.graph import *  # noqa: F403
from gradstack_autograd.graph import __all__ as _graph_all
from gradstack_autograd.graph_drawing import *  # noqa: F403
from gradstack_autograd.graph_drawing import __all__ as _drawing_all

__all__ = [*_graph_all, *_drawing_all]
