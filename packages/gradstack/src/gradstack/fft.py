"""``gradstack.fft``: torch.fft's discrete Fourier transforms (``fft``, ``rfft``, ``fftn``
..., ``fftfreq``, ``fftshift``), from gradstack-tensor-core's ``gradstack_tensor.fft``;
``import gradstack.fft`` and ``from gradstack.fft import rfft`` work as torch's do."""

from gradstack_tensor.fft import *  # noqa: F403
from gradstack_tensor.fft import __all__ as __all__  # noqa: PLC0414
