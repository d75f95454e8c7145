"""The linear layers: ``Identity``, ``Linear``, ``LazyLinear`` (``in_features`` inferred
from the first input), ``Bilinear`` and ``NonDynamicallyQuantizableLinear`` (the name
torch gives ``MultiheadAttention.out_proj``).

Examples
--------
>>> import gradstack_tensor as gt
>>> Linear(3, 2)(gt.ones(5, 3)).shape
gradstack.Size([5, 2])
>>> Bilinear(3, 4, 2)(gt.ones(5, 3), gt.ones(5, 4)).shape
gradstack.Size([5, 2])
"""

from __future__ import annotations

import math

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

_MISSING = object()  # a name absent from ``_parameters`` (Linear.forward)

__all__ = ["Identity", "Linear", "LazyLinear", "Bilinear", "NonDynamicallyQuantizableLinear"]


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Parameters
    ----------
    in_features, out_features : int
        The sizes of each input and output sample.
    bias : bool, default True
        Whether to learn an additive bias.
    device, dtype : optional
        Where (the CPU) and in which dtype to create the parameters.

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in_features)``, initialised as torch does with
        ``kaiming_uniform_(a=sqrt(5))``: uniform in ``[-1/sqrt(in_features), 1/sqrt(in_features)]``.
    bias : Parameter or None
        Shape ``(out_features,)``, uniform in the same interval.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> layer = Linear(20, 30)
    >>> layer(gt.randn(128, 20)).shape
    gradstack.Size([128, 30])
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(gt.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(gt.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight and bias with torch's default initialisation."""
        # Note [Linear's default init]
        # kaiming_uniform_ with a=sqrt(5) is uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)); see
        # pytorch/pytorch#57109 for why torch keeps this historical choice.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        # Note [Linear reads its parameters from _parameters]
        # ``self.weight`` is found by Module.__getattr__, after the normal lookup failed:
        # on Python 3.11 that failure formats an AttributeError first, ~1.2 us per read,
        # 2% of the TinyModel step for its two layers.  Where the normal lookup would fail
        # for sure (a plain Linear, neither name in the instance dict) the same objects are
        # read from ``_parameters``; a subclass, a parametrisation (which swaps the class),
        # or a parameter deleted or moved takes the normal path.
        d = self.__dict__
        if type(self) is Linear and "weight" not in d and "bias" not in d:
            params = d["_parameters"]
            weight = params.get("weight", _MISSING)
            bias = params.get("bias", _MISSING)
            if weight is not _MISSING and bias is not _MISSING:
                return F.linear(input, weight, bias)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is inferred from the first input.

    Until the first call the weight and bias are
    :class:`~gradstack_nn.parameter.UninitializedParameter` objects (optimisers may already
    hold them) and ``in_features`` is 0.  The first call sets ``in_features`` to
    ``input.shape[-1]``, materialises and initialises the parameters as ``Linear`` does,
    and the module becomes a ``Linear``, as in torch.

    >>> import gradstack_tensor as gt
    >>> layer = LazyLinear(4)
    >>> layer(gt.ones(3, 7)).shape, layer.in_features, type(layer).__name__
    (gradstack.Size([3, 4]), 7, 'Linear')
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initialise as ``Linear`` does, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """Materialise the weight ``(out_features, input.shape[-1])`` and the bias."""
        if self.has_uninitialized_params():
            with ag.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class Identity(Module):
    """Returns its input unchanged (a placeholder layer); it ignores any arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Bilinear(Module):
    """``y = x1^T A x2 + b`` (:func:`F.bilinear`).

    Parameters
    ----------
    in1_features, in2_features, out_features : int
        The sizes of each sample of the two inputs and of the output.
    bias : bool, default True
        Whether to learn an additive bias.

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in1_features, in2_features)``, uniform in
        ``[-1/sqrt(in1_features), 1/sqrt(in1_features)]`` (torch's draws after the same
        seed).
    bias : Parameter or None
        Shape ``(out_features,)``, uniform in the same interval.
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(gt.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(gt.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight, then the bias, from ``U(-1/sqrt(in1), 1/sqrt(in1))``."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name torch gives ``MultiheadAttention.out_proj``."""
