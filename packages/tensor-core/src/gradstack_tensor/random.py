"""Random number generation with torch's CPU generator: the same seed, the same numbers.

``Generator`` is torch's ``CPUGeneratorImpl``: a Mersenne Twister (MT19937) seeded as torch
seeds it, plus the cached second value of the Box-Muller pair that torch's one-at-a-time
normal sampler keeps.  The distributions built on it (``_impl_random.py``) repeat torch
2.13's CPU kernels, so after ``manual_seed(s)`` the factories and in-place fills give
torch's values bit for bit (README: "Random numbers" lists what matches).

Note [torch's random stream]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch seeds MT19937 with the low 32 bits of the seed by Knuth's initialisation (what numpy's
legacy ``RandomState(seed)`` does), so numpy's ``MT19937`` bit generator, set to that
state, produces torch's raw 32-bit stream (``random()``), vectorised; ``random64()`` is two
draws, the first one high.  A float32 uniform is ``(raw & 0xffffff) * 2**-24``, a float64
one ``(raw64 & (2**53 - 1)) * 2**-53``.  ``get_state()`` returns torch's own byte layout
(``CPUGeneratorImplState``, 5056 bytes), so a state moves between torch and gradstack.

Examples
--------
>>> import gradstack_tensor as gt
>>> _ = gt.manual_seed(0)
>>> gt.rand(3).tolist()  # torch.manual_seed(0); torch.rand(3) gives the same
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
>>> g = gt.Generator().manual_seed(42)
>>> gt.randint(0, 10, (5,), generator=g).tolist()
[2, 7, 6, 4, 6]
"""

from __future__ import annotations

import contextlib
import secrets

import numpy as np

from .device import device as _device

__all__ = [
    "Generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "default_generator",
    "get_rng_state",
    "set_rng_state",
    "fork_rng",
]

# torch's default_rng_seed_val: the seed of a new torch.Generator()
DEFAULT_SEED = 67280421310721
_N = 624  # MT19937's state size

# torch's CPUGeneratorImplState on x86-64 (its legacy part first), byte for byte
_STATE = np.dtype(
    [
        ("the_initial_seed", "<u8"),
        ("left", "<i4"),
        ("seeded", "<i4"),
        ("next", "<u8"),
        ("state", "<u8", (_N,)),
        ("normal_x", "<f8"),
        ("normal_y", "<f8"),
        ("normal_rho", "<f8"),
        ("normal_is_valid", "<i4"),
        ("_pad0", "<i4"),
        ("next_float_normal_sample", "<f4"),
        ("is_next_float_normal_sample_valid", "u1"),
        ("_pad1", "u1", (3,)),
    ]
)
STATE_SIZE = _STATE.itemsize  # 5056


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise RuntimeError(f"Overflow when unpacking long: seed {seed} out of range")
    return seed % (2**64)


class Generator:
    """A random generator with ``torch.Generator``'s interface and torch's CPU stream.

    A new generator is seeded with torch's default seed (67280421310721), as torch's is.

    Examples
    --------
    >>> g = Generator()
    >>> g.initial_seed()
    67280421310721
    >>> g.manual_seed(7) is g
    True
    """

    def __init__(self, device="cpu"):
        d = device if isinstance(device, _device) else _device(device)
        if d.type != "cpu":
            raise RuntimeError(
                f"gradstack computes on the CPU only; a Generator for {str(d)!r} is not "
                "available. Use Generator() or Generator('cpu')."
            )
        self._bits = np.random.MT19937()
        self._reseed(DEFAULT_SEED)

    def _reseed(self, seed: int) -> None:
        key = np.random.RandomState(seed & 0xFFFFFFFF).get_state()[1]
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _N}}
        self._seed = seed
        self._fresh = True  # torch's next_ is 0 until the first draw
        self._next_double = None  # the cached second value of a Box-Muller pair
        self._next_float = None

    @property
    def device(self) -> _device:
        """``device(type='cpu')``."""
        return _device("cpu")

    def manual_seed(self, seed) -> Generator:
        """Seed the generator (an int in [-2**63, 2**64)); returns it."""
        self._reseed(_check_seed(seed))
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy (53 bits, as torch); returns the seed."""
        value = secrets.randbits(53)
        self._reseed(value)
        return value

    def initial_seed(self) -> int:
        """The seed of the last ``manual_seed``/``seed`` (or the default seed)."""
        return self._seed

    # -- the raw stream (what torch's random() and random64() return) ---------------------

    def _random(self, n: int) -> np.ndarray:
        """``n`` raw 32-bit draws (as uint64), torch's ``random()``."""
        if n > 0:
            self._fresh = False
        return self._bits.random_raw(n)

    def _random_mod_into(self, out: np.ndarray, span: int, low: int) -> None:
        """``out[i] = int64(raw % span + low)`` for ``len(out)`` raw 32-bit draws, drawn
        and converted in one C pass (span below 2**32; Note [random_ draws in the same
        pass] in _random_kernels.pyx)."""
        from ._random_kernels import mt_random_mod

        if out.size > 0:
            self._fresh = False
        state = self._bits.state
        key = np.ascontiguousarray(state["state"]["key"], dtype=np.uint32).copy()
        pos = mt_random_mod(key, int(state["state"]["pos"]), out, span, low)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    def _random64(self, n: int) -> np.ndarray:
        """``n`` 64-bit draws, torch's ``random64()``: two raw draws, the first one high."""
        r = self._random(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- state -------------------------------------------------------------------------------

    def get_state(self):
        """The state as a uint8 tensor in torch's layout (``torch.get_rng_state()``'s)."""
        from ._tensor import _wrap

        mt = self._bits.state["state"]
        pos = int(mt["pos"])
        s = np.zeros((), dtype=_STATE)
        s["the_initial_seed"] = self._seed
        s["seeded"] = 1
        s["state"] = mt["key"]
        if pos == _N:
            s["left"], s["next"] = 1, (0 if self._fresh else _N)
        else:
            s["left"], s["next"] = _N + 1 - pos, pos
        if self._next_double is not None:
            s["normal_is_valid"], s["normal_y"] = 1, self._next_double
        if self._next_float is not None:
            s["is_next_float_normal_sample_valid"] = 1
            s["next_float_normal_sample"] = self._next_float
        return _wrap(np.frombuffer(s.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from :meth:`get_state` (or from ``torch.get_rng_state()``)."""
        from ._tensor import Tensor, _data

        if not isinstance(new_state, Tensor) or _data(new_state).dtype != np.uint8:
            raise TypeError(
                "expected a gradstack.ByteTensor, but got "
                f"{type(new_state).__name__} (pass what get_state() returned)"
            )
        raw = np.ascontiguousarray(_data(new_state)).reshape(-1)
        if raw.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input "
                f"RNG state size to be {raw.size}"
            )
        s = np.frombuffer(raw.tobytes(), dtype=_STATE)[0]
        left, nxt = int(s["left"]), int(s["next"])
        if not (s["seeded"] and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        if left != 1 and left + nxt != _N + 1:
            raise RuntimeError(
                f"Invalid mt19937 state: left={left} and next={nxt} are not a position the "
                f"generator reaches (left + next == {_N + 1})"
            )
        key = s["state"].astype(np.uint32)
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": key, "pos": _N if left == 1 else nxt},
        }
        self._seed = int(s["the_initial_seed"])
        self._fresh = left == 1 and nxt == 0
        self._next_double = float(s["normal_y"]) if s["normal_is_valid"] else None
        self._next_float = (
            float(s["next_float_normal_sample"]) if s["is_next_float_normal_sample_valid"] else None
        )
        return self

    def __repr__(self):
        return f"<gradstack.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.seed()  # the default generator starts from entropy, as torch's

# Note [Draw observer]
# vmap must know when a function it maps draws random numbers (its ``randomness`` flag:
# "error" refuses, "different"/"same" decide what each sample sees), including draws that
# no op argument reveals (``randn(3)``).  Every draw passes through generator_or_default,
# so one optional callback here is the whole interface; None (the default) costs one check.
_draw_observer = None


def set_draw_observer(fn):
    """Install ``fn(generator)``, called before every draw (None removes it); returns the
    previous observer.  ``generator`` is the one passed to the drawing function, or None."""
    global _draw_observer
    previous, _draw_observer = _draw_observer, fn
    return previous


def generator_or_default(generator, name: str = "generator") -> Generator:
    """``generator`` checked to be a :class:`Generator`, or the default one when None.
    Every random op calls it once before drawing (Note [Draw observer])."""
    if _draw_observer is not None:
        _draw_observer(generator)
    return _checked_generator(generator, name)


# Note [Factories under vmap]
# Under ``vmap(randomness="different")`` torch gives every sample its own draw, also from
# functions that take no batched tensor: ``randn(3)`` inside the mapped function returns a
# batched tensor, drawn as ``randn(B, 3)`` (one batch dim per such vmap level, outermost
# first), and ``zeros_like(x)`` of a batched ``x`` is batched like ``x``.  tensor-core does
# not know vmap's batched tensors (functional-api, a higher layer), so the factories ask an
# optional *factory batcher* that vmap installs while it runs:
#
# - ``batcher.draw_sizes(name)``: the batch sizes a factory's draw gets in front of its
#   shape, and a function that wraps the drawn tensor as a batched one; or None, and the
#   factory draws as usual (the draw observer then rules: "error" refuses the draw).
# - ``batcher.like(fn, input, args, kwargs)``: a ``*_like`` factory on a batched input
#   (run on the physical tensor and batched again), or NotImplemented for a plain input.
#
# None (the default, and always outside vmap) costs the factories one check.
_factory_batcher = None


def set_factory_batcher(batcher):
    """Install the factory batcher (Note [Factories under vmap]; None removes it); returns
    the previous one."""
    global _factory_batcher
    previous, _factory_batcher = _factory_batcher, batcher
    return previous


def factory_generator(generator, name: str, batchable: bool = True):
    """The generator a factory draws from, and how its draw is batched.

    Returns ``(generator, sizes, wrap)``: outside a batching vmap (or when
    ``batchable`` is false, e.g. with ``out=``) ``sizes`` is ``()`` and ``wrap`` None, and
    this is :func:`generator_or_default`; otherwise the factory draws ``sizes + shape``
    and returns ``wrap(result)`` (Note [Factories under vmap])."""
    batcher = _factory_batcher
    if batcher is not None and batchable:
        batch = batcher.draw_sizes(name)
        if batch is not None:
            return _checked_generator(generator, name), batch[0], batch[1]
    return generator_or_default(generator, name), (), None


def _checked_generator(generator, name: str) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(
            f"{name}(): argument 'generator' must be gradstack.Generator, not "
            f"{type(generator).__name__}"
        )
    return generator


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it.  ``int(seed)`` is taken, as torch does."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state (a uint8 tensor in torch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restore the default generator's state on exit (``torch.random.fork_rng``).

    ``devices`` and ``device_type`` name accelerators, which gradstack does not have.
    """
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
