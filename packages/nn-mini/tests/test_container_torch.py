"""ParameterDict (modules/container.py) against torch: every operation of the dict
(insertion order, update, setdefault, pop, copy, ``|``, deletion, nesting), its parameters'
names and gradients, its repr and its errors, and its parameters reaching an optimiser.
(ParameterList and ModuleDict are compared in test_layers_torch.py.)"""

from __future__ import annotations

from collections import OrderedDict

import pytest
from gradstack_nn_tests_oracle import error_of
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")


def _parameter_dict_program(lib):
    """Every operation of ParameterDict, recorded as plain values."""
    nn = lib.nn
    log = []
    lib.manual_seed(0)
    pd = nn.ParameterDict({"w": lib.ones(2, 3), "b": nn.Parameter(lib.zeros(2)), "s": "text"})
    log.append(("init order", list(pd), list(pd.keys())))
    log.append(("types", [type(v).__name__ for v in pd.values()]))
    log.append(("state_dict", [(k, tuple(v.shape)) for k, v in pd.state_dict().items()]))
    log.append(("named", [n for n, _ in pd.named_parameters()]))
    log.append(("repr", _repr(pd)))
    pd.update(OrderedDict([("z", lib.full((1,), 2.0)), ("a", lib.ones(3))]))
    pd.update([("m", lib.zeros(4)), ["b", nn.Parameter(lib.full((5,), 3.0))]])
    log.append(("after update", list(pd), [n for n, _ in pd.named_parameters()]))
    log.append(("b replaced", pd["b"].tolist(), len(pd), "z" in pd, "q" in pd, 3 in pd))
    log.append(("setdefault", pd.setdefault("a").tolist(), pd.setdefault("n", None)))
    log.append(("setdefault tensor", type(pd.setdefault("t", lib.ones(1))).__name__))
    log.append(("get", pd.get("missing", 7), pd.get("z").tolist()))
    popped = pd.pop("z")
    log.append(("pop", type(popped).__name__, popped.tolist(), list(pd)))
    log.append(("popitem", pd.popitem()[0], list(pd)))
    log.append(("items", [(k, type(v).__name__) for k, v in pd.items()]))
    log.append(("reversed", list(reversed(pd))))
    copy = pd.copy()
    log.append(("copy", list(copy), copy["w"] is pd["w"]))
    log.append(("fromkeys", list(pd.fromkeys(["x", "y"], lib.ones(1)))))
    other = nn.ParameterDict(OrderedDict([("k2", lib.ones(1)), ("k1", lib.ones(2))]))
    log.append(("or", list(pd | other), list(other | pd)))
    other |= {"k0": lib.ones(3)}
    log.append(("ior", list(other)))
    del pd["w"]
    log.append(("del", list(pd), [n for n, _ in pd.named_parameters()]))
    model = nn.Module()
    model.params = nn.ParameterDict({"w": lib.ones(2, 2)})
    log.append(("nested", list(model.state_dict()), len(list(model.parameters()))))
    loss = (model.params["w"] * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()
    loss.backward()
    log.append(("grad", model.params["w"].grad.tolist()))
    pd.clear()
    log.append(("clear", list(pd), len(pd), list(pd.state_dict())))
    log.append(("empty repr", repr(nn.ParameterDict())))
    log.append(("errors", [error_of(f) for f in _parameter_dict_errors(lib)]))
    return log


def _parameter_dict_errors(lib):
    pd = lib.nn.ParameterDict({"a": lib.ones(1)})
    return [
        lambda: pd[3],
        lambda: pd.__setitem__(3, lib.ones(1)),
        lambda: pd["missing"],
        lambda: pd.update(5),
        lambda: pd.update([("a", lib.ones(1), 3)]),
        lambda: pd.update([3]),
        lambda: pd(lib.ones(1)),
        lambda: pd.__setitem__("x.y", lib.ones(1)),
        lambda: pd.pop("missing"),
        lambda: pd.__setitem__("training", lib.ones(1)),
    ]


def _repr(module):
    return repr(module).replace("torch.", "LIB.").replace("gradstack.", "LIB.")


def test_parameter_dict_matches_torch():
    ours, theirs = _parameter_dict_program(gs), _parameter_dict_program(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b


def test_parameter_dict_parameters_reach_the_optimiser():
    pd = gs.nn.ParameterDict({"a": gs.ones(2), "b": gs.ones(3)})
    opt = gs.optim.SGD(pd.parameters(), lr=0.5)
    (pd["a"].sum() + 2 * pd["b"].sum()).backward()
    opt.step()
    assert pd["a"].tolist() == [0.5, 0.5] and pd["b"].tolist() == [0.0, 0.0, 0.0]


def _container_program(lib):
    """torch's deprecated Container: its warning, children, state dict, repr and errors."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.manual_seed(0)
        c = lib.nn.Container(fc=lib.nn.Linear(2, 3), act=lib.nn.ReLU(), none=None)
    log = [("warning", [(w.category.__name__, str(w.message)) for w in caught])]
    log.append(("children", [n for n, _ in c.named_children()], list(c._modules)))
    log.append(("state_dict", [(k, v.tolist()) for k, v in c.state_dict().items()]))
    log.append(("repr", _repr(c)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log.append(("empty repr", repr(lib.nn.Container())))
        errors = [
            lambda: lib.nn.Container(fc=3),
            lambda: c(lib.ones(1)),
            lambda: lib.nn.Container(lib.nn.ReLU()),
        ]
        log.append(("errors", [error_of(f) for f in errors]))
    return log


def test_container_matches_torch():
    ours, theirs = _container_program(gs), _container_program(torch)
    assert ours == theirs
    assert ours[0][1] and ours[1][1] == ["fc", "act"]
