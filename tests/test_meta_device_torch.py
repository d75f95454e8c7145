"""The meta device through the whole stack, against torch 2.13 (Note [Meta tensors carry no
data] in gradstack_tensor.meta): ops give torch's shapes and dtypes, modules build on the
meta device without drawing random numbers, ``to_empty`` gives them memory, and torch's
recipes for meta models run unchanged."""

from __future__ import annotations

import copy

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def _m(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32).to("meta")


OPS_ON_META = {
    "add scalar": lambda L: _m(L, 2, 3) + 1,
    "mul broadcast": lambda L: _m(L, 2, 3) * _m(L, 3),
    "mul 0-d cpu tensor": lambda L: _m(L, 2, 3) * L.tensor(2.0),
    "int + float": lambda L: _m(L, 2, 3, dtype=L.int64) + 1.5,
    "int + 0-d float64": lambda L: _m(L, 4, dtype=L.int32) + L.tensor(1.0, dtype=L.float64),
    "compare": lambda L: _m(L, 2, 3) > 0,
    "unary float": lambda L: _m(L, 5, dtype=L.int64).sqrt(),
    "sum": lambda L: _m(L, 2, 3).sum(),
    "sum dim keepdim": lambda L: _m(L, 2, 3, 4).sum(1, keepdim=True),
    "mean dims": lambda L: _m(L, 2, 3, 4).mean((0, 2)),
    "max dim": lambda L: _m(L, 2, 3).max(1)[1],
    "matmul": lambda L: _m(L, 5, 2, 3) @ _m(L, 3, 4),
    "getitem": lambda L: _m(L, 4, 3)[1:, 0],
    "view": lambda L: _m(L, 2, 3).view(-1, 2),
    "transpose": lambda L: _m(L, 2, 3, 4).transpose(0, 2),
    "cat": lambda L: L.cat([_m(L, 2, 3), _m(L, 4, 3)]),
    "stack": lambda L: L.stack([_m(L, 2, 3), _m(L, 2, 3)], 1),
    "clone": lambda L: _m(L, 2, 3).clone(),
    "to float64": lambda L: _m(L, 2, 3).to(L.float64),
    "softmax": lambda L: L.softmax(_m(L, 2, 3), -1),
    "linear": lambda L: L.nn.functional.linear(_m(L, 8, 5), _m(L, 3, 5), _m(L, 3)),
    "conv2d": lambda L: L.nn.functional.conv2d(_m(L, 2, 3, 9, 9), _m(L, 4, 3, 3, 3), stride=2),
    "max_pool2d": lambda L: L.nn.functional.max_pool2d(_m(L, 2, 3, 8, 8), 2),
    "layer_norm": lambda L: L.nn.functional.layer_norm(_m(L, 2, 3, 4), (4,)),
    "embedding": lambda L: L.nn.functional.embedding(L.tensor([[1, 2]]).to("meta"), _m(L, 5, 3)),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(
        _m(L, 4, 5), L.tensor([0, 1, 2, 3]).to("meta")
    ),
}


@pytest.mark.parametrize("name", sorted(OPS_ON_META))
def test_ops_on_meta_tensors_give_torch_shapes_and_dtypes(name):
    ours, theirs = OPS_ON_META[name](gs), OPS_ON_META[name](torch)
    assert ours.is_meta and theirs.is_meta
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def _mlp(L):
    return L.nn.Sequential(
        L.nn.Linear(5, 8), L.nn.ReLU(), L.nn.LayerNorm(8), L.nn.Dropout(0.1), L.nn.Linear(8, 2)
    )


def test_a_model_built_on_meta_then_given_memory_and_weights():
    for L in (gs, torch):
        L.manual_seed(0)
        with L.device("meta"):
            model = _mlp(L)
        assert all(p.is_meta for p in model.parameters())
        assert tuple(model(L.ones(4, 5, device="meta")).shape) == (4, 2)
        assert L.rand(1).item() == pytest.approx(0.49625658988952637)  # nothing drawn
        model.to_empty(device="cpu")
        assert not any(p.is_meta for p in model.parameters())
        L.manual_seed(1)
        ref = _mlp(L)
        assert str(model.load_state_dict(ref.state_dict())) == "<All keys matched successfully>"
        model.eval(), ref.eval()
        x = L.randn(3, 5)
        assert (model(x) - ref(x)).abs().max().item() == 0.0
    gs.manual_seed(0), torch.manual_seed(0)
    ours, theirs = gs.nn.Linear(3, 4, device="meta"), torch.nn.Linear(3, 4, device="meta")
    assert repr(ours.weight).replace("gradstack", "torch") == repr(theirs.weight)


def test_ensembling_recipe_stack_module_state_on_meta():
    # torch.func's model-ensembling tutorial: a meta copy of the model is called with the
    # stacked real weights through functional_call under vmap
    for L in (gs, torch):
        L.manual_seed(0)
        models = [
            L.nn.Sequential(L.nn.Linear(4, 6), L.nn.Tanh(), L.nn.Linear(6, 2)) for _ in range(3)
        ]
        params, buffers = L.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def call(p, b, x, base=base, L=L):
            return L.func.functional_call(base, (p, b), (x,))

        x = L.randn(5, 4)
        out = L.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
        expected = L.stack([m(x) for m in models])
        assert tuple(out.shape) == (3, 5, 2)
        assert (out - expected).abs().max().item() < 1e-6


# Note [A meta tensor's strides] (gradstack_tensor.meta): views of meta tensors report
# torch's strides and contiguity, and no data is read or written
META_LAYOUTS = {
    "empty": lambda L: L.empty(3, 4, device="meta"),
    "size-1 dims": lambda L: L.empty(3, 1, 4, device="meta"),
    "t": lambda L: L.empty(3, 4, device="meta").t(),
    "transpose": lambda L: L.empty(2, 3, 4, device="meta").transpose(0, 2),
    "permute": lambda L: L.empty(2, 3, 4, device="meta").permute(2, 0, 1),
    "permute of t": lambda L: L.empty(3, 4, device="meta").t().unsqueeze(0).permute(2, 0, 1),
    "step slice": lambda L: L.empty(6, 4, device="meta")[::2],
    "step slice last": lambda L: L.empty(6, 4, device="meta")[:, 1::2],
    "slice of t": lambda L: L.empty(6, 4, device="meta").t()[1:, ::3],
    "select": lambda L: L.empty(3, 4, device="meta")[:, 1],
    "none index": lambda L: L.empty(3, 4, device="meta")[None, ..., 2:],
    "expand": lambda L: L.empty(3, 4, device="meta").unsqueeze(0).expand(2, 3, 4),
    "expand size-1": lambda L: L.empty(3, 1, device="meta").expand(3, 5),
    "as_strided": lambda L: L.empty(3, 4, device="meta").as_strided((2, 2), (1, 2), 1),
    "as_strided contiguous": lambda L: L.empty(12, device="meta").as_strided((3, 4), (4, 1)),
    "narrow": lambda L: L.empty(4, 5, device="meta").narrow(1, 1, 2),
    "diagonal": lambda L: L.empty(4, 5, device="meta").diagonal(),
    "unfold": lambda L: L.empty(10, device="meta").unfold(0, 3, 2),
    "squeeze": lambda L: L.empty(3, 1, 4, device="meta").transpose(0, 2).squeeze(),
    "chunk": lambda L: L.empty(4, 6, device="meta").chunk(2, 1)[1],
    "unbind": lambda L: L.empty(4, 6, device="meta").unbind(1)[2],
    "contiguous of t": lambda L: L.empty(3, 4, device="meta").t().contiguous(),
    "view": lambda L: L.empty(3, 4, device="meta").view(2, 6),
    "0-size t": lambda L: L.empty(0, 4, device="meta").t(),
    "model weight t": lambda L: L.nn.Linear(4, 3, device="meta").weight.t(),
}


@pytest.mark.parametrize("name", sorted(META_LAYOUTS))
def test_meta_views_report_torch_strides_and_contiguity(name):
    ours, theirs = META_LAYOUTS[name](gs), META_LAYOUTS[name](torch)
    assert ours.is_meta and theirs.is_meta
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert [ours.stride(d) for d in range(ours.dim())] == list(theirs.stride())
    assert ours.is_contiguous() == theirs.is_contiguous()


def test_meta_views_still_refuse_their_data():
    t = gs.empty(3, 4, device="meta").t()
    with pytest.raises(NotImplementedError):
        t.tolist()
    with pytest.raises(NotImplementedError):
        t[::2].numpy()
    t.add_(1)  # a write into a meta view writes nothing, as torch's
    assert t.stride() == (1, 4)


def test_meta_as_strided_checks_its_arguments_as_torch():
    m = gs.empty(3, 4, device="meta")
    with pytest.raises(RuntimeError, match="mismatch in length"):
        m.as_strided((2, 2), (1,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        m.as_strided((2, 2), (1, -2))


META_LAYOUTS_KEPT = {
    "storage offset of a slice": lambda L: L.empty(3, 4, device="meta")[1:],
    "storage offset of t select": lambda L: L.empty(3, 4, device="meta").t()[1],
    "storage offset of a step slice": lambda L: L.empty(6, 4, device="meta")[1::2, 2:],
    "as_strided offset": lambda L: L.empty(3, 4, device="meta").as_strided((2, 2), (1, 2), 1),
    "as_strided of a slice": lambda L: L.empty(3, 4, device="meta")[1:].as_strided((2,), (1,)),
    "unary of t": lambda L: L.empty(3, 4, device="meta").t().exp(),
    "t plus scalar": lambda L: L.empty(3, 4, device="meta").t() + 1,
    "t plus t": lambda L: L.empty(3, 4, device="meta").t() * L.empty(3, 4, device="meta").t(),
    "clone of permute": lambda L: L.empty(2, 3, 4, device="meta").permute(2, 0, 1).clone(),
    "clone of a step slice": lambda L: L.empty(6, 4, device="meta")[::2].clone(),
    "unary of a step slice": lambda L: L.empty(6, 4, device="meta")[::2].neg(),
}


@pytest.mark.parametrize("name", sorted(META_LAYOUTS_KEPT))
def test_meta_offsets_and_kept_layouts_are_torchs(name):
    ours, theirs = META_LAYOUTS_KEPT[name](gs), META_LAYOUTS_KEPT[name](torch)
    assert ours.is_meta and tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()


def test_contiguous_of_a_contiguous_meta_tensor_is_itself():
    for L in (gs, torch):
        m = L.empty(3, 4, device="meta")
        assert m.contiguous() is m
        assert m.t().contiguous() is not m and m.t().contiguous().is_contiguous()
        c = m.t().clone(memory_format=L.contiguous_format)
        assert c.stride() == (3, 1) and c.is_meta
