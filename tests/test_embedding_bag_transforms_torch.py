"""``F.embedding_bag`` under torch.func's transforms: vmap and forward AD take the composed
path (the fused kernels of nn-mini are first-order only) and give torch's values.  Here, not
in nn-mini's tests: it needs functional-api, which nn-mini does not depend on."""

from __future__ import annotations

import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_vmap_and_forward_ad_take_the_composed_path():
    from gradstack_functional.func import jvp, vmap

    rng = np.random.default_rng(11)
    tables = rng.standard_normal((3, 6, 2))
    text, offsets = gt.tensor([0, 5, 2, 2, 1]), gt.tensor([0, 2])
    got = vmap(lambda w: F.embedding_bag(text, w, offsets, mode="sum"))(gt.tensor(tables))
    want = [
        torch.nn.functional.embedding_bag(
            torch.tensor(text.numpy()), torch.tensor(t), torch.tensor(offsets.numpy()),
            mode="sum",
        ).numpy()
        for t in tables
    ]  # fmt: skip
    np.testing.assert_allclose(got.numpy(), np.stack(want), rtol=1e-12)
    tangent = rng.standard_normal((6, 2))
    _, dy = jvp(lambda w: F.embedding_bag(text, w, offsets, mode="mean"),
                (gt.tensor(tables[0]),), (gt.tensor(tangent),))  # fmt: skip
    want = torch.nn.functional.embedding_bag(
        torch.tensor(text.numpy()), torch.tensor(tangent), torch.tensor(offsets.numpy())
    )
    np.testing.assert_allclose(dy.numpy(), want.numpy(), rtol=1e-12)
