"""A training step split into GEMM time and everything else, for gradstack and for torch.

Used by the model workers (``library_worker.py``) and the split table
(``model_gemm_split.py``).  Three measures per model, one thread:

- **the numpy limit**: the step's GEMMs, as torch calls them (every ``mm``/``addmm``/
  ``bmm``/... of its profile, its convolutions and oneDNN RNN layers written as the GEMMs
  of an im2col or of one step at a time: :func:`torch_gemms`), timed alone with
  ``np.matmul`` on contiguous float32 arrays into a preallocated output
  (:func:`time_gemms`);
- **gradstack's GEMM time**: the time its profiler gives to its GEMM ops and to their
  backward nodes (:func:`gemm_time`, Note [What counts as GEMM time]);
- **torch's primitive time**: the time torch's profiler gives to its GEMM, convolution
  and RNN primitives.

A step's "everything else" is its unprofiled time less its GEMM (or primitive) time, so
that the profiler's own cost per event stays out of it.

Note [The split in the same rounds]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On a shared host the load of one moment differs from the next (two identical builds
profiled a minute apart gave GEMM times 3x apart), so the parts of the split are measured
in the same interleaved rounds as the steps (``models_vs_torch.measure``): in each round
every library runs its timed sample, then one profiled step, and numpy one pass over
torch's GEMMs.  "Else" is a round's unprofiled step less the same round's GEMM time, and
the table's ratios are medians of the per-round ratios, as the steps' ratios are.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = [
    "GRADSTACK_GEMM_OPS",
    "TORCH_PRIMITIVES",
    "gemm_time",
    "profile_step",
    "time_gemms",
    "torch_gemms",
]

# Note [What counts as GEMM time]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# gradstack: its GEMM ops and their backward nodes, and its convolution op ``conv2d``
# with its ConvolutionBackward0 (im2col, the products and col2im inside them), as torch's
# side counts its convolution primitives whole; torch: its GEMM, convolution and RNN
# primitives (TORCH_PRIMITIVES).  Events inside a counted event are not counted again.
GRADSTACK_GEMM_OPS = frozenset(
    f"aten::{n}"
    for n in (
        "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "mv", "addmv", "dot", "linear",
        "conv2d",
    )
)  # fmt: skip
# gradstack's recurrent layers (``_lstm_layer``/``_gru_layer``: a direction of a layer in
# one op, its per-step GEMMs and cells, and their backward nodes) count as torch's oneDNN
# layers (``mkldnn_rnn_layer``) do: a primitive, its elementwise work included.
GRADSTACK_GEMM_OPS = GRADSTACK_GEMM_OPS | {"gradstack::_lstm_layer", "gradstack::_gru_layer"}
_TORCH_GEMMS = frozenset(
    f"aten::{n}" for n in ("mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot")
)
TORCH_PRIMITIVES = _TORCH_GEMMS | {
    "aten::convolution",
    "aten::convolution_backward",
    "aten::mkldnn_rnn_layer",
    "aten::mkldnn_rnn_layer_backward",
}


def _outermost(events, belongs):
    """The events that ``belongs`` accepts and that no accepted ancestor contains."""
    out = []
    for evt in events:
        if not belongs(evt):
            continue
        parent = evt.cpu_parent
        while parent is not None and not belongs(parent):
            parent = parent.cpu_parent
        if parent is None:
            out.append(evt)
    return out


def _is_gradstack_gemm(evt) -> bool:
    if evt.name in GRADSTACK_GEMM_OPS:
        return True
    fwd = getattr(evt, "forward_event", None)
    return fwd is not None and fwd.name in GRADSTACK_GEMM_OPS and fwd is not evt


def gemm_time(events, library: str) -> float:
    """Microseconds of GEMM work in a profile's events (Note [What counts as GEMM time])."""
    if library.startswith("gradstack"):
        chosen = _outermost(events, _is_gradstack_gemm)
    else:
        chosen = _outermost(events, lambda e: e.name in TORCH_PRIMITIVES)
    return sum(e.cpu_time_total for e in chosen)


# ----------------------------------------------------------------------------- torch's GEMMs
# A GEMM is (repeat, batch, m, k, n): ``repeat`` calls of a (batch x) (m, k) @ (k, n).


def _conv_out(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _conv_gemms(x, w, stride, padding, dilation, groups, mask=(False, False, True)):
    """The im2col GEMMs of a 2-d convolution: forward (``mask`` None), or the input and
    weight gradients that ``mask`` asks for."""
    n, _, h, wd = x
    o, cg, kh, kw = w
    ho = _conv_out(h, kh, stride[0], padding[0], dilation[0])
    wo = _conv_out(wd, kw, stride[1], padding[1], dilation[1])
    cols, per = cg * kh * kw, o // groups
    if mask is None:
        return [(1, groups, per, cols, n * ho * wo)]
    out = []
    if mask[0]:
        out.append((1, groups, cols, per, n * ho * wo))
    if mask[1]:
        out.append((1, groups, per, n * ho * wo, cols))
    return out


def _rnn_gemms(shapes, args, backward):
    """The GEMMs of a oneDNN RNN layer: the input projection of every step at once and one
    hidden-state product per step (forward), or their gradients (backward)."""
    x, w_ih, w_hh = shapes[0], shapes[1], shapes[2]
    batch_first = args[21] if backward else args[14]
    t, b = (x[1], x[0]) if batch_first else (x[0], x[1])
    gh, i, h = w_ih[0], w_ih[1], w_hh[1]
    if not backward:
        return [(1, 1, t * b, i, gh), (t, 1, b, h, gh)]
    return [(1, 1, t * b, gh, i), (1, 1, gh, t * b, i), (1, 1, gh, t * b, h), (t, 1, b, gh, h)]


def torch_gemms(events) -> list[tuple]:
    """The GEMMs of torch's step, from a profile with ``record_shapes=True``."""
    out = []
    for evt in _outermost(events, lambda e: e.name in TORCH_PRIMITIVES):
        s, args = evt.input_shapes, list(getattr(evt, "concrete_inputs", None) or [])
        name = evt.name[len("aten::") :]
        if name in ("mm", "addmm", "mv", "addmv", "dot"):
            a, b = (s[1], s[2]) if name.startswith("add") else (s[0], s[1])
            m, k = (a[0], a[1]) if len(a) == 2 else (1, a[0])
            out.append((1, 1, m, k, b[1] if len(b) == 2 else 1))
        elif name in ("bmm", "baddbmm", "addbmm"):
            a, b = (s[0], s[1]) if name == "bmm" else (s[1], s[2])
            out.append((1, a[0], a[1], a[2], b[2]))
        elif name == "convolution":  # input, weight, bias, stride, padding, dilation, ...
            out += _conv_gemms(s[0], s[1], args[3], args[4], args[5], args[8], mask=None)
        elif name == "convolution_backward":  # grad, input, weight, bias_sizes, stride ...
            out += _conv_gemms(s[1], s[2], args[4], args[5], args[6], args[9], mask=args[10])
        else:
            out += _rnn_gemms(s, args, backward=name.endswith("backward"))
    return out


def time_gemms(gemms: list[tuple], min_sample: float = 0.05, repeat: int = 1) -> float:
    """Seconds for one pass over ``gemms`` with ``np.matmul`` (the fastest of ``repeat``
    samples of at least ``min_sample`` seconds), float32, contiguous, into ``out``."""
    rng = np.random.default_rng(0)
    arrays = {}
    calls = []
    for rep, batch, m, k, n in gemms:
        lead = (batch,) if batch > 1 else ()
        key = (lead, m, k, n)
        if key not in arrays:
            arrays[key] = (
                rng.standard_normal((*lead, m, k), dtype=np.float32),
                rng.standard_normal((*lead, k, n), dtype=np.float32),
                np.empty((*lead, m, n), np.float32),
            )
        calls.append((rep, *arrays[key]))

    def one_pass():
        for rep, a, b, c in calls:
            for _ in range(rep):
                np.matmul(a, b, out=c)

    one_pass()
    start = time.perf_counter()
    one_pass()
    loops = max(1, int(min_sample / max(time.perf_counter() - start, 1e-9)))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            one_pass()
        samples.append((time.perf_counter() - start) / loops)
    return min(samples)


def profile_step(lib, library: str, step, count: int = 1) -> dict:
    """``count`` profiled steps: the least GEMM (or primitive) time in seconds, the fastest
    profiled step, and for torch the step's GEMMs (:func:`torch_gemms`)."""
    gemm, total, gemms = [], [], None
    for _ in range(count):
        # shapes only for torch's GEMM list: gradstack's shape recording is a slower layer
        with lib.autograd.profiler.profile(record_shapes=library == "torch") as prof:
            start = time.perf_counter()
            step()
            total.append(time.perf_counter() - start)
        events = prof.events() if library.startswith("gradstack") else prof.function_events
        gemm.append(gemm_time(events, library) * 1e-6)
        if library == "torch" and gemms is None:
            gemms = torch_gemms(events)
    return {
        "gemm": min(gemm),
        "profiled_step": min(total),
        "gemms": gemms,
    }
