"""``torch.profiler``'s interface: a profiler driven by training steps and a schedule,
built on this package's :class:`~gradstack_profiler.profile`.

``profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1,
active=2, repeat=1), on_trace_ready=tensorboard_trace_handler("./log"))`` is a context
manager whose ``step()`` marks the end of a training step.  The schedule says, for each
step number, what the profiler does (``ProfilerAction``): nothing (``NONE``, the ``wait``
steps), get ready (``WARMUP``), record (``RECORD``), or record and, at the end of the
step, hand the cycle's results to ``on_trace_ready(prof)`` (``RECORD_AND_SAVE``, the last
active step of a cycle).  Each cycle records into a fresh autograd-profiler session
(``acc_events=True`` keeps the earlier cycles' events), whose results the profile shows
(``key_averages()``, ``events()``, ``export_chrome_trace``).  With a schedule, each step
is a ``ProfilerStep#<n>`` block, named ``ProfilerStep*`` in the events and the table (one
row for all steps) and ``ProfilerStep#<n>`` in the trace, as in torch.  Without one, everything
between ``__enter__`` and ``__exit__`` is recorded and ``on_trace_ready`` runs at exit.

Note [The transitions are torch's]
What happens between two steps depends on the previous action and the next one, as in
torch's ``profile.action_map`` (``torch/profiler/profiler.py``): e.g. ``RECORD_AND_SAVE``
then ``RECORD`` stops the session, calls ``on_trace_ready``, and starts a new one.  The
table below is that map without its device-only ``DEVICE_STOPPED`` rows (gradstack has
no device whose collection can stop early).  ``WARMUP`` starts no session here: torch
warms its device tracer up; the CPU needs nothing.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd  # noqa: F401 - the autograd layer
>>> traces = []
>>> with profile(activities=[ProfilerActivity.CPU],
...              schedule=schedule(wait=1, warmup=1, active=2),
...              on_trace_ready=traces.append) as prof:
...     for _ in range(8):
...         _ = gt.ones(2, 2).sin()
...         prof.step()
>>> len(traces)  # one per cycle of wait + warmup + active = 4 steps
2
>>> [(e.key, e.count) for e in prof.key_averages() if e.key.startswith("ProfilerStep")]
[('ProfilerStep*', 2)]
>>> sorted(e.trace_name for e in prof.events() if e.name == "ProfilerStep*")
['ProfilerStep#6', 'ProfilerStep#7']
"""

from __future__ import annotations

import enum
import gzip
import os
import shutil
import socket
import tempfile
import time
import warnings
from functools import partial
from typing import Any

from ._profile import profile as _session_profile
from ._profile import record_function

__all__ = [
    "profile",
    "schedule",
    "ProfilerAction",
    "ProfilerActivity",
    "tensorboard_trace_handler",
    "supported_activities",
    "record_function",
    "DeviceType",
    "kineto_available",
]


class DeviceType(enum.IntEnum):
    """torch's device kinds (``c10::DeviceType``), with torch's numbers: what a profiler
    event's ``device_type`` names.  gradstack's events are all ``CPU``."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __str__(self):
        return f"DeviceType.{self.name}"


def kineto_available() -> bool:
    """False: gradstack's profiler records its own events, not through Kineto (torch's
    answer in a build without Kineto; code that checks it keeps to the CPU path).

    >>> kineto_available()
    False
    """
    return False


class ProfilerActivity(enum.Enum):
    """What a profiler records: ``CPU`` (gradstack's only activity); the device
    activities exist so that torch code naming them runs (they warn and record nothing)."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"


ProfilerActivity.__module__ = "gradstack.profiler"


def supported_activities() -> set:
    """The activities this build can record: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (the value a schedule returns)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


ProfilerAction.__module__ = "gradstack.profiler"


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
):
    """torch's schedule: after ``skip_first`` steps, cycles of ``wait`` steps doing
    nothing, ``warmup`` steps, and ``active`` recorded steps (the last one
    ``RECORD_AND_SAVE``), ``repeat`` times (0: forever).  ``skip_first_wait`` skips the
    first cycle's wait.

    Examples
    --------
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
):
    """An ``on_trace_ready`` that writes each cycle's Chrome trace into ``dir_name`` as
    ``<worker_name>.<time_ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), torch's file
    names (TensorBoard's profiler plugin and Perfetto read them)."""

    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name = file_name + ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """torch.profiler's ``profile`` (see the module's docstring).

    Parameters
    ----------
    activities : iterable of ProfilerActivity, optional
        Default: :func:`supported_activities`.  A device activity warns (gradstack runs on
        the CPU) and the CPU is profiled.
    schedule : callable, optional
        ``step -> ProfilerAction`` (:func:`schedule`); default: record every step.
    on_trace_ready : callable, optional
        Called with this profile at the end of each cycle (and at exit when recording).
    record_shapes, profile_memory, with_stack, with_flops, with_modules, acc_events
        As the autograd profiler's (:class:`gradstack_profiler.profile`).
    experimental_config, execution_trace_observer, use_cuda, custom_trace_id_callback,
    post_processing_timeout_s
        torch's other options, accepted; ``use_cuda`` warns as torch's does.
    """

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda=None,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        activity_set = set(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead",
                FutureWarning,
                stacklevel=2,
            )
            if use_cuda:
                activity_set.add(ProfilerActivity.CUDA)
            else:
                activity_set.discard(ProfilerActivity.CUDA)
        if not activity_set:
            raise AssertionError("No valid profiler activities found")
        devices = sorted(a.name for a in activity_set if a is not ProfilerActivity.CPU)
        if devices:
            warnings.warn(
                f"profile(activities=...{', '.join(devices)}): gradstack runs on the CPU "
                "only, so there is no device activity to record; profiling the CPU.",
                UserWarning,
                stacklevel=2,
            )
        self.activities = activity_set
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.profiler: Any = None
        if schedule:
            self.schedule = schedule
            self.record_steps = True  # each step is a ProfilerStep#<n> block
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: Any = None
        self.current_action = self.schedule(self.step_num)
        self._warned_clear = False
        # Note [The transitions are torch's]
        a = ProfilerAction
        self.action_map: dict[tuple, list] = {
            (a.NONE, a.NONE): [],
            (a.NONE, a.WARMUP): [self.prepare_trace],
            (a.NONE, a.RECORD): [self.prepare_trace, self.start_trace],
            (a.NONE, a.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (a.WARMUP, a.NONE): [
                partial(warnings.warn, "Incorrect schedule: WARMUP followed by NONE"),
                self.start_trace,
                self.stop_trace,
            ],
            (a.WARMUP, a.WARMUP): [],
            (a.WARMUP, a.RECORD): [self.start_trace],
            (a.WARMUP, a.RECORD_AND_SAVE): [self.start_trace],
            (a.RECORD, a.NONE): [
                partial(warnings.warn, "Incorrect schedule: RECORD followed by NONE"),
                self.stop_trace,
            ],
            (a.RECORD, a.WARMUP): [
                partial(warnings.warn, "Incorrect schedule: RECORD followed by WARMUP"),
                self.stop_trace,
            ],
            (a.RECORD, a.RECORD): [],
            (a.RECORD, a.RECORD_AND_SAVE): [],
            (a.RECORD_AND_SAVE, a.NONE): [self.stop_trace, self._trace_ready],
            (a.RECORD_AND_SAVE, a.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (a.RECORD_AND_SAVE, a.RECORD): [
                self.stop_trace,
                self._trace_ready,
                self.prepare_trace,
                self.start_trace,
            ],
            (a.RECORD_AND_SAVE, a.RECORD_AND_SAVE): [
                self.stop_trace,
                self._trace_ready,
                self.prepare_trace,
                self.start_trace,
            ],
            (a.WARMUP, None): [self.start_trace, self.stop_trace],
            (a.RECORD, None): [self.stop_trace, self._trace_ready],
            (a.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    # -- the session of a cycle -----------------------------------------------------------

    def prepare_trace(self) -> None:
        if self.profiler is not None and not self.acc_events and not self._warned_clear:
            self._warned_clear = True
            warnings.warn(
                "Warning: Profiler clears events at the end of each cycle. Only events from "
                "the current cycle will be reported. To keep events across cycles, set "
                "acc_events=True.",
                stacklevel=2,
            )
        if self.profiler is None or not self.acc_events:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (with_flops/with_modules warned here)
                self.profiler = _session_profile(
                    record_shapes=self.record_shapes,
                    profile_memory=self.profile_memory,
                    with_stack=self.with_stack,
                    with_flops=self.with_flops,
                    with_modules=self.with_modules,
                    acc_events=self.acc_events,
                )

    def start_trace(self) -> None:
        if self.profiler is None:
            self.prepare_trace()
        self.profiler.__enter__()

    def stop_trace(self) -> None:
        if self.profiler is not None and self.profiler.entered:
            self.profiler.__exit__(None, None, None)

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action) -> None:
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

    # -- the steps ------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """The end of a training step: the schedule's next action takes over."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    # -- results (of the last cycle, or of every cycle with acc_events) -------------------

    def _results(self):
        if self.profiler is None:
            raise AssertionError("the profiler has recorded nothing yet")
        return self.profiler

    def events(self):
        """The recorded events (``EventList``)."""
        return self._results().events()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ):
        """The events averaged by name (``.table(sort_by=..., row_limit=...)`` prints
        torch's table)."""
        return self._results().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def export_chrome_trace(self, path: str, use_python_export: bool = False):
        """Write the Chrome trace (JSON; gzipped when ``path`` ends in ``.gz``)."""
        if path.endswith(".gz"):
            fd, tmp = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            try:
                self._results().export_chrome_trace(tmp)
                with open(tmp, "rb") as fin, gzip.open(path, "wb") as fout:
                    shutil.copyfileobj(fin, fout)
            finally:
                os.remove(tmp)
            return
        self._results().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        """Write flame-graph stacks (needs ``with_stack=True``)."""
        self._results().export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """Accepted (torch adds it to the trace's metadata); not written here."""

    def add_metadata_json(self, key: str, value: str) -> None:
        """Accepted (torch adds it to the trace's metadata); not written here."""
