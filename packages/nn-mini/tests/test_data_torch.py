"""utils.data against torch.utils.data: data sets, random_split, samplers, default_collate
and default_convert on every structure, the DataLoader's batches, lengths, options and
errors, and worker processes (the same batches as without workers, torch's round-robin
over an IterableDataset, seeding, errors raised in a worker), WeightedRandomSampler's
draws, StackDataset and ChainDataset."""

from __future__ import annotations

import collections
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn.utils import data as gd
from gradstack_nn_tests_torch_like import GS

torch = pytest.importorskip("torch")
td = torch.utils.data


def to_plain(obj):
    """A comparable plain-Python form of a batch from either library."""
    if isinstance(obj, gt.Tensor):
        return ("tensor", obj.dtype.name, tuple(obj.shape), obj.tolist())
    if isinstance(obj, torch.Tensor):
        return ("tensor", str(obj.dtype).removeprefix("torch."), tuple(obj.shape), obj.tolist())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, tuple(to_plain(v) for v in obj))
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: to_plain(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [to_plain(v) for v in obj])
    return obj


Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    T = gt if lib == "gs" else torch
    return {
        "tensors": [T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])],
        "tuples": [(T.tensor([1.0]), 3), (T.tensor([2.0]), 4)],
        "floats": [1.5, 2.5],
        "ints": [1, 2],
        "bools": [True, False],
        "strings": ["a", "b"],
        "dicts": [{"x": T.tensor(1), "y": 0.5, "n": "a"}, {"x": T.tensor(2), "y": 1.5, "n": "b"}],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "lists": [[1, 2.0], [3, 4.0]],
        "numpy arrays": [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
        "numpy scalars": [np.float32(1.5), np.float32(2.5)],
        "numpy int64": [np.int64(1), np.int64(7)],
        "nested": [{"a": [(1, 2.0)]}, {"a": [(3, 4.0)]}],
    }


@pytest.mark.parametrize("kind", sorted(_samples("gs")))
def test_default_collate_matches_torch(kind):
    g = gd.default_collate(_samples("gs")[kind])
    t = td.default_collate(_samples("torch")[kind])
    assert to_plain(g) == to_plain(t)


@pytest.mark.parametrize("kind", sorted(_samples("gs")))
def test_default_convert_matches_torch(kind):
    g = gd.default_convert(_samples("gs")[kind])
    t = td.default_convert(_samples("torch")[kind])
    assert to_plain(g) == to_plain(t)


def test_collate_errors_as_torch():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        gd.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        gd.default_collate([object(), object()])


# ---------------------------------------------------------------------------------------
# data sets and random_split


def test_tensor_dataset_subset_concat():
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6)
    g = gd.TensorDataset(gt.tensor(x), gt.tensor(y))
    t = td.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(g) == len(t) == 6
    for i in (0, 3, -1, slice(1, 4), [0, 5]):
        assert to_plain(g[i]) == to_plain(t[i])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        gd.TensorDataset(gt.zeros(3), gt.zeros(4))
    gs, ts = gd.Subset(g, [4, 1, 1]), td.Subset(t, [4, 1, 1])
    assert len(gs) == 3 and to_plain(gs[0]) == to_plain(ts[0])
    assert to_plain(gs.__getitems__([0, 2])) == to_plain(ts.__getitems__([0, 2]))
    gc, tc = g + gs, t + ts
    assert len(gc) == len(tc) == 9
    assert [to_plain(gc[i]) for i in range(-9, 9)] == [to_plain(tc[i]) for i in range(-9, 9)]
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        gd.Dataset()[0]


@pytest.mark.parametrize(
    "lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.25, 0.25, 0.25, 0.25]]
)
@pytest.mark.parametrize("n", [10, 11, 7])
def test_random_split_sizes_match_torch(lengths, n):
    if all(isinstance(v, int) for v in lengths) and sum(lengths) != n:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = gd.random_split(range(n), lengths, generator=gt.Generator().manual_seed(0))
        t = td.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in g] == [len(s) for s in t]
    assert sorted(i for s in g for i in s) == list(range(n))  # a partition
    again = gd.random_split(range(n), lengths, generator=gt.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in g]  # reproducible


def test_random_split_errors_and_warnings():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        gd.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        gd.random_split(range(10), [-0.5, 1.5])
    with pytest.warns(UserWarning, match="Length of split at index [12] is 0"):
        gd.random_split(range(2), [0.9, 0.05, 0.05])


# ---------------------------------------------------------------------------------------
# samplers


def test_samplers():
    assert list(gd.SequentialSampler(range(4))) == list(td.SequentialSampler(range(4)))
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, True)]:
        g = gd.BatchSampler(gd.SequentialSampler(range(n)), bs, drop)
        t = td.BatchSampler(td.SequentialSampler(range(n)), bs, drop)
        assert list(g) == list(t) and len(g) == len(t)
    perm = list(gd.RandomSampler(range(20)))
    assert sorted(perm) == list(range(20)) and len(gd.RandomSampler(range(20))) == 20
    draws = list(gd.RandomSampler(range(5), replacement=True, num_samples=70))
    assert len(draws) == 70 and set(draws) <= set(range(5))
    cycled = list(gd.RandomSampler(range(4), num_samples=10))
    assert len(cycled) == 10 and sorted(cycled[:4]) == [0, 1, 2, 3]
    sub = list(gd.SubsetRandomSampler([7, 8, 9]))
    assert sorted(sub) == [7, 8, 9]
    g1 = list(gd.RandomSampler(range(50), generator=gt.Generator().manual_seed(3)))
    g2 = list(gd.RandomSampler(range(50), generator=gt.Generator().manual_seed(3)))
    assert g1 == g2
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        gd.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        gd.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        gd.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        gd.BatchSampler(range(3), 2, 1)


def test_random_sampler_without_generator_draws_from_the_default_generator():
    gt.manual_seed(7)
    a = list(gd.RandomSampler(range(30)))
    gt.manual_seed(7)
    b = list(gd.RandomSampler(range(30)))
    assert a == b and a != list(range(30))


# ---------------------------------------------------------------------------------------
# DataLoader


def _pair_datasets(n=10):
    x, y = np.arange(2.0 * n).reshape(n, 2), np.arange(n)
    return (
        gd.TensorDataset(gt.tensor(x), gt.tensor(y)),
        td.TensorDataset(torch.tensor(x), torch.tensor(y)),
    )


LOADER_OPTIONS = [
    dict(),
    dict(batch_size=3),
    dict(batch_size=3, drop_last=True),
    dict(batch_size=4, drop_last=False),
    dict(batch_size=None),
    dict(batch_size=2, sampler=[9, 0, 4, 4, 1]),
    dict(batch_sampler=[[1, 2], [9], [0, 0, 3]]),
    dict(batch_size=3, collate_fn=lambda batch: len(batch)),
]


@pytest.mark.parametrize("options", LOADER_OPTIONS, ids=lambda o: ",".join(sorted(o)) or "none")
def test_loader_batches_match_torch(options):
    g, t = _pair_datasets()
    gl, tl = gd.DataLoader(g, **options), td.DataLoader(t, **options)
    assert len(gl) == len(tl)
    assert [to_plain(b) for b in gl] == [to_plain(b) for b in tl]


def test_shuffle_visits_every_sample_once_per_epoch_and_is_seeded():
    g, _ = _pair_datasets(23)
    loader = gd.DataLoader(g, batch_size=5, shuffle=True, generator=gt.Generator().manual_seed(1))
    epochs = [[i for _, y in loader for i in y.tolist()] for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(23))
    assert epochs[0] != epochs[1]
    again = gd.DataLoader(g, batch_size=5, shuffle=True, generator=gt.Generator().manual_seed(1))
    assert [[i for _, y in again for i in y.tolist()] for _ in range(3)] == epochs
    # without a generator: the default generator, seeded by manual_seed
    gt.manual_seed(5)
    a = [i for _, y in gd.DataLoader(g, batch_size=5, shuffle=True) for i in y.tolist()]
    gt.manual_seed(5)
    b = [i for _, y in gd.DataLoader(g, batch_size=5, shuffle=True) for i in y.tolist()]
    assert a == b


def test_each_pass_draws_one_number_as_torch_does():
    """torch draws the workers' base seed from the generator at every pass, shuffled or
    not: the generator's state advances by one draw per epoch."""
    g, _ = _pair_datasets(4)
    gen = gt.Generator().manual_seed(0)
    list(gd.DataLoader(g, generator=gen))
    ref = gt.Generator().manual_seed(0)
    gt.randint(0, 2**63 - 1, (), generator=ref)
    assert gt.rand(3, generator=gen).tolist() == gt.rand(3, generator=ref).tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
        (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with"),
        (
            dict(num_workers=1, multiprocessing_context="nope"),
            "should specify a valid start method",
        ),
    ],
)
def test_loader_argument_errors_match_torch(kwargs, message):
    g, t = _pair_datasets()
    with pytest.raises(ValueError, match=message) as te:
        td.DataLoader(t, **kwargs)
    with pytest.raises(ValueError) as ge:
        gd.DataLoader(g, **kwargs)
    assert str(ge.value) == str(te.value)


class _GsStream(gd.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = gd.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


class _TorchStream(td.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = td.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("workers", [0, 2, 3])
@pytest.mark.parametrize(
    "options",
    [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)],
    ids=["bs3", "drop_last", "None"],
)
def test_iterable_dataset_matches_torch(workers, options):
    with warnings.catch_warnings(record=True) as gw:
        warnings.simplefilter("always")
        got = [to_plain(b) for b in gd.DataLoader(_GsStream(11), num_workers=workers, **options)]
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        want = [
            to_plain(b) for b in td.DataLoader(_TorchStream(11), num_workers=workers, **options)
        ]
    assert got == want
    # more workers than CPUs: the same warning as torch's
    assert sorted({str(w.message) for w in gw}) == sorted({str(w.message) for w in tw})
    assert len(gd.DataLoader(_GsStream(11), **options)) == len(
        td.DataLoader(_TorchStream(11), **options)
    )
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        gd.DataLoader(_GsStream(3), shuffle=True)


def _record_seed(worker_id):
    info = gd.get_worker_info()
    assert info.id == worker_id and gt.initial_seed() == info.seed


@pytest.mark.parametrize(
    "options",
    [dict(batch_size=4), dict(batch_size=4, shuffle=True), dict(batch_size=None)],
    ids=["bs4", "shuffle", "None"],
)
def test_workers_give_the_batches_of_the_main_process(options):
    g, _ = _pair_datasets(19)
    seq = gd.DataLoader(g, generator=gt.Generator().manual_seed(2), **options)
    par = gd.DataLoader(
        g,
        num_workers=2,
        generator=gt.Generator().manual_seed(2),
        worker_init_fn=_record_seed,
        **options,
    )
    assert [to_plain(b) for b in par] == [to_plain(b) for b in seq]
    assert gd.get_worker_info() is None  # in the main process


def test_persistent_workers_serve_several_epochs():
    g, _ = _pair_datasets(13)
    loader = gd.DataLoader(g, batch_size=4, num_workers=2, persistent_workers=True)
    for _ in range(3):
        assert [i for _, y in loader for i in y.tolist()] == list(range(13))
    stream = gd.DataLoader(_GsStream(7), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert sorted(i for b in stream for i in b.tolist()) == list(range(7))
    # an abandoned epoch does not leak into the next one
    it = iter(loader)
    next(it)
    assert [i for _, y in loader for i in y.tolist()] == list(range(13))


class _Failing(gd.Dataset):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"no sample {i}")
        return gt.tensor([float(i)])

    def __len__(self):
        return 8


def test_an_error_in_a_worker_is_raised_with_its_traceback():
    loader = gd.DataLoader(_Failing(), batch_size=2, num_workers=2)
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0") as e:
        list(loader)
    assert "no sample 5" in str(e.value) and "Original Traceback" in str(e.value)


def test_pin_memory_warns_as_torch_without_an_accelerator():
    g, _ = _pair_datasets(2)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        list(gd.DataLoader(g, pin_memory=True))


# ---------------------------------------------------------------------------------------
# WeightedRandomSampler, StackDataset, ChainDataset


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(weights=[0.1, 0.9, 0.4, 0.7, 3.0], num_samples=40),
        dict(weights=[0.1, 0.9, 0.4, 0.7, 3.0], num_samples=4, replacement=False),
        dict(weights=(np.arange(30) % 7 + 0.5).tolist(), num_samples=200),
    ],
)
def test_weighted_random_sampler_draws_torch_s_indices(kwargs):
    out = []
    for lib in (GS, torch):
        lib.manual_seed(3)
        sampler = (
            lib.utils.data.WeightedRandomSampler(**kwargs)
            if lib is torch
            else (GS.nn.utils.data.WeightedRandomSampler(**kwargs))
        )
        gen = lib.Generator().manual_seed(11)
        with_gen = (
            torch.utils.data.WeightedRandomSampler(**kwargs, generator=gen)
            if lib is torch
            else GS.nn.utils.data.WeightedRandomSampler(**kwargs, generator=gen)
        )
        out.append((list(sampler), list(sampler), list(with_gen), len(sampler)))
    assert out[0] == out[1]
    assert len(out[0][0]) == kwargs["num_samples"]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        (dict(weights=[1.0, 2.0], num_samples=0), ValueError),
        (dict(weights=[1.0, 2.0], num_samples=True), ValueError),
        (dict(weights=[1.0, 2.0], num_samples=2.0), ValueError),
        (dict(weights=[1.0, 2.0], num_samples=2, replacement=1), ValueError),
        (dict(weights=[[1.0, 2.0]], num_samples=2), ValueError),
    ],
)
def test_weighted_random_sampler_errors_as_torch(kwargs, error):
    with pytest.raises(error) as theirs:
        torch.utils.data.WeightedRandomSampler(**kwargs)
    with pytest.raises(error) as ours:
        GS.nn.utils.data.WeightedRandomSampler(**kwargs)
    assert str(ours.value) == str(theirs.value)


def test_stack_dataset_as_torch():
    x, y = np.arange(12.0).reshape(4, 3), np.arange(4)
    g = GS.nn.utils.data.StackDataset(GS.tensor(x), GS.tensor(y))
    t = torch.utils.data.StackDataset(torch.tensor(x), torch.tensor(y))
    assert len(g) == len(t) == 4
    for i in range(4):
        assert [v.tolist() for v in g[i]] == [v.tolist() for v in t[i]]
        assert isinstance(g[i], tuple)
    gd = GS.nn.utils.data.StackDataset(a=GS.tensor(x), b=list("wxyz"))
    td = torch.utils.data.StackDataset(a=torch.tensor(x), b=list("wxyz"))
    assert gd[2]["b"] == td[2]["b"] == "y" and gd[2]["a"].tolist() == td[2]["a"].tolist()
    assert [sorted(s) for s in gd.__getitems__([0, 3])] == [["a", "b"], ["a", "b"]]
    assert [s["b"] for s in gd.__getitems__([0, 3])] == ["w", "z"]
    for build in (
        lambda m: m.StackDataset(),
        lambda m: m.StackDataset([1, 2], a=[1, 2]),
        lambda m: m.StackDataset([1, 2], [1, 2, 3]),
        lambda m: m.StackDataset(a=[1, 2], b=[1]),
    ):
        with pytest.raises(ValueError) as theirs:
            build(torch.utils.data)
        with pytest.raises(ValueError) as ours:
            build(GS.nn.utils.data)
        assert str(ours.value) == str(theirs.value)


def test_chain_dataset_as_torch():
    def build(m, lib):
        class Counter(m.IterableDataset):
            def __init__(self, start, stop):
                self.start, self.stop = start, stop

            def __iter__(self):
                return iter(range(self.start, self.stop))

            def __len__(self):
                return self.stop - self.start

        return m.ChainDataset([Counter(0, 3), Counter(10, 12)]), Counter(5, 7) + Counter(1, 2)

    (g, gadd), (t, tadd) = build(GS.nn.utils.data, GS), build(torch.utils.data, torch)
    assert list(g) == list(t) == [0, 1, 2, 10, 11]
    assert len(g) == len(t) == 5
    assert type(gadd).__name__ == type(tadd).__name__ == "ChainDataset"
    assert list(gadd) == list(tadd) == [5, 6, 1]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(torch.utils.data.ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(GS.nn.utils.data.ChainDataset([[1, 2]]))
