"""TransformerDecoderLayer, TransformerDecoder and Transformer
(modules/transformer.py) against torch: the same initial weights after the same
seed, parameter names and shapes, reprs, outputs and gradients in float64 (inputs and
parameters), masks of both kinds, key-padding masks, ``norm_first``, ``batch_first``,
activations, the dropout masks in training, and errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

# (torch deprecates a bool key-padding mask beside a float attention mask, which the cases
# below mix on purpose; gradstack accepts the mix silently: README, "Known differences")
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")

R = np.random.default_rng(1)
TGT = R.standard_normal((4, 3, 8))
MEM = R.standard_normal((5, 3, 8))
TGT_PADDING = R.random((3, 4)) < 0.3
TGT_PADDING[:, 0] = False
MEM_PADDING = R.random((3, 5)) < 0.3
MEM_PADDING[:, 0] = False
MEM_BOOL_MASK = R.random((4, 5)) < 0.3
MEM_BOOL_MASK[:, 0] = False
MEM_FLOAT_MASK = R.standard_normal((4, 5))
SRC_FLOAT_MASK = R.standard_normal((5, 5))
CAUSAL = np.triu(np.ones((4, 4), bool), 1)
BF_TGT = TGT.transpose(1, 0, 2).copy()  # (batch_first: (3, 4, 8))
BF_MEM = MEM.transpose(1, 0, 2).copy()


def _causal(L):
    return L.nn.Transformer.generate_square_subsequent_mask(4, dtype=L.float64)


def _layer(**kw):
    return lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, **kw)


# name -> (module builder, inputs, forward keywords, train mode)
CASES = {
    "layer": (_layer(), [TGT, MEM], None, False),
    "layer_norm_first_gelu_batch_first": (
        _layer(activation="gelu", norm_first=True, batch_first=True),
        [BF_TGT, BF_MEM],
        None,
        False,
    ),
    "layer_callable_activation": (
        _layer(activation=lambda x: x.tanh() * 2.0),
        [TGT, MEM],
        None,
        False,
    ),
    "layer_module_activation": (
        lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, activation=L.nn.SiLU()),
        [TGT, MEM],
        None,
        False,
    ),
    "layer_no_bias": (_layer(bias=False), [TGT, MEM], None, False),
    "layer_masks_and_padding": (
        _layer(),
        [TGT, MEM],
        lambda L: dict(
            tgt_mask=_causal(L),
            memory_mask=L.tensor(MEM_BOOL_MASK),
            tgt_key_padding_mask=L.tensor(TGT_PADDING),
            memory_key_padding_mask=L.tensor(MEM_PADDING),
        ),
        False,
    ),
    "layer_float_memory_mask_causal_hint": (
        _layer(norm_first=True),
        [TGT, MEM],
        lambda L: dict(
            tgt_mask=L.tensor(CAUSAL),
            tgt_is_causal=True,
            memory_mask=L.tensor(MEM_FLOAT_MASK),
        ),
        False,
    ),
    "layer_unbatched": (_layer(), [TGT[:, 0], MEM[:, 0]], None, False),
    "layer_training": (_layer(dropout=0.3), [TGT, MEM], None, True),
    "layer_training_norm_first": (
        _layer(dropout=0.2, norm_first=True, batch_first=True),
        [BF_TGT, BF_MEM],
        lambda L: dict(tgt_mask=_causal(L)),
        True,
    ),
    "decoder_with_norm": (
        lambda L: L.nn.TransformerDecoder(
            L.nn.TransformerDecoderLayer(8, 2, 16), 2, norm=L.nn.LayerNorm(8)
        ),
        [TGT, MEM],
        lambda L: dict(tgt_mask=_causal(L), memory_key_padding_mask=L.tensor(MEM_PADDING)),
        False,
    ),
    "decoder_training": (
        lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, 0.25), 3),
        [TGT, MEM],
        lambda L: dict(tgt_mask=L.tensor(CAUSAL)),
        True,
    ),
    # Transformer(src, tgt): MEM is the source here
    "transformer": (
        lambda L: L.nn.Transformer(8, 2, 2, 2, 16),
        [MEM, TGT],
        lambda L: dict(
            src_mask=L.tensor(SRC_FLOAT_MASK),
            tgt_mask=_causal(L),
            src_key_padding_mask=L.tensor(MEM_PADDING),
            tgt_key_padding_mask=L.tensor(TGT_PADDING),
            memory_key_padding_mask=L.tensor(MEM_PADDING),
        ),
        False,
    ),
    "transformer_batch_first_norm_first_gelu": (
        lambda L: L.nn.Transformer(
            8, 4, 1, 2, 12, activation="gelu", batch_first=True, norm_first=True
        ),
        [BF_MEM, BF_TGT],
        lambda L: dict(memory_mask=L.tensor(MEM_FLOAT_MASK)),
        False,
    ),
    "transformer_training": (
        lambda L: L.nn.Transformer(8, 2, 1, 1, 16, dropout=0.3),
        [MEM, TGT],
        lambda L: dict(tgt_mask=_causal(L)),
        True,
    ),
    "transformer_unbatched": (
        lambda L: L.nn.Transformer(8, 2, 1, 1, 16, bias=False),
        [MEM[:, 1], TGT[:, 1]],
        None,
        False,
    ),
}


def run(lib, name):
    build, inputs, keywords, train = CASES[name]
    lib.manual_seed(0)
    with warnings.catch_warnings():  # (torch's encoder: "enable_nested_tensor is True ...")
        warnings.simplefilter("ignore")
        module = build(lib)
    initial = [p.detach().numpy().copy() for p in module.parameters()]
    module = module.double()
    module.train(train)
    tensors = [lib.tensor(a, requires_grad=True) for a in inputs]
    out = module(*tensors, **(keywords(lib) if keywords else {}))
    (out * out).sum().backward()
    return {
        "repr": repr(module),
        "state_dict": [(k, tuple(v.shape)) for k, v in module.state_dict().items()],
        "initial": initial,
        "values": [out.detach().numpy()] + [t.grad.numpy() for t in tensors],
        "param_grads": [p.grad.numpy() for p in module.parameters()],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ours, theirs = run(gs, name), run(torch, name)
    if "callable" not in name:  # (a lambda's repr names its address: not shown, anyway)
        assert ours["repr"] == theirs["repr"]
    assert ours["state_dict"] == theirs["state_dict"]
    assert len(ours["initial"]) == len(theirs["initial"])
    for a, b in zip(ours["initial"], theirs["initial"]):
        np.testing.assert_array_equal(a, b)  # the same float32 draws
    assert len(ours["param_grads"]) == len(theirs["param_grads"])
    for a, b in zip(ours["values"] + ours["param_grads"], theirs["values"] + theirs["param_grads"]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_training_output_depends_on_the_dropout_masks():
    """The training cases above test something: without dropout the output differs."""
    ours = run(gs, "layer_training")["values"][0]
    plain = run(gs, "layer")["values"][0]
    assert not np.allclose(ours, plain)


@pytest.mark.parametrize("size", [1, 4])
@pytest.mark.parametrize("dtype", [None, "float64", "bool"])
def test_generate_square_subsequent_mask(size, dtype):
    ours = gs.nn.Transformer.generate_square_subsequent_mask(
        size, dtype=getattr(gs, dtype) if dtype else None
    )
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(
        size, dtype=getattr(torch, dtype) if dtype else None
    )
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()


def test_causal_mask_detection_as_torch():
    from gradstack_nn.modules.transformer import _detect_is_causal_mask

    causal = gs.nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(causal, None, 4) is True
    assert _detect_is_causal_mask(gs.tensor(CAUSAL), None, 4) is True
    assert _detect_is_causal_mask(gs.zeros(4, 4), None, 4) is False
    assert _detect_is_causal_mask(causal, None, 3) is False
    assert _detect_is_causal_mask(None, True, 4) is True
    assert _detect_is_causal_mask(causal, False, 4) is False


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and words are compared
        return type(e).__name__, str(e)
    return None


def test_errors_match_torch():
    def programs(L):
        model = L.nn.Transformer(8, 2, 1, 1, 16)
        layer = L.nn.TransformerDecoderLayer(8, 2, 16)
        src, tgt = L.ones(5, 3, 8), L.ones(4, 2, 8)
        return [
            lambda: model(src, tgt),
            lambda: model(L.ones(5, 3, 6), L.ones(4, 3, 6)),
            lambda: L.nn.TransformerDecoderLayer(8, 2, activation="tanh"),
            lambda: layer(L.ones(4, 3, 8), src, memory_is_causal=True),
            lambda: layer(L.ones(4, 3, 8), src, tgt_mask=L.ones(3, 3, dtype=L.bool)),
            lambda: L.nn.TransformerDecoderLayer(10, 3),
        ]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [_error(p) for p in programs(gs)]
        theirs = [_error(p) for p in programs(torch)]
    for a, b in zip(ours, theirs):
        assert a is not None and b is not None
        assert a[0] == b[0]
        assert _words(a[1]) == _words(b[1])


def _words(message: str) -> str:
    """The first line, sizes written as tuples (torch: ``torch.Size([3, 3])``)."""
    line = message.split("\n")[0]
    return re.sub(r"\w+\.Size\(\[(\d+), (\d+)\]\)", r"(\1, \2)", line)


def test_layers_are_independent_copies():
    decoder = gs.nn.TransformerDecoder(gs.nn.TransformerDecoderLayer(8, 2, 16), 2)
    a, b = decoder.layers[0].linear1.weight, decoder.layers[1].linear1.weight
    assert a is not b
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert len(list(decoder.parameters())) == 2 * len(
        list(gs.nn.TransformerDecoderLayer(8, 2, 16).parameters())
    )
