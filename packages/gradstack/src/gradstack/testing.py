"""``gradstack.testing``: torch.testing's ``assert_close``, ``make_tensor`` and the
deprecated ``assert_allclose`` (from gradstack-tensor-core's ``gradstack_tensor.testing``)."""

from gradstack_tensor.testing import assert_allclose, assert_close, make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
