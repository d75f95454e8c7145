"""The generic join context manager (torch's ``torch.distributed.algorithms.join``).

Ranks with uneven inputs run different numbers of training iterations; without help, the
ranks that still train wait forever (or until the rank that finished leaves, Note [No
rank left waiting]) in collectives that the finished ranks never make.  Inside
``with Join([joinable, ...]):`` a rank that ran out of inputs *joins*: in ``__exit__`` it
repeatedly asks how many ranks still train (an all-reduce that each training rank matches
from :meth:`Join.notify_join_context` at the start of its iteration) and runs the main
hooks of its joinables, which make the collectives of one iteration with neutral values
(DDP's: zero gradients); once every rank joined, the post-hooks run (DDP's copies the
model of the last rank to join to all).  Everything here follows torch 2.13, names,
arguments, messages and the order of the collectives.

Note [Join's collectives]
A training rank, per iteration: ``all_reduce(ones)`` (async, from ``notify_join_context``;
with ``throw_on_early_termination`` then ``all_reduce(zeros)``, blocking), then its
joinables' own collectives.  A joined rank, per iteration of ``__exit__``:
``all_reduce(zeros)`` (the number of ranks still training; 0 ends the loop), with
``throw_on_early_termination`` an ``all_reduce(ones)`` (the training ranks see a non-zero
and raise; the joined rank raises too), then the main hooks.  The calls pair up one to one
on the joinables' process group, so they must be made in this order on every rank.

Examples
--------
A joinable that counts, across ranks, the inputs every rank processed (torch's tutorial
example), run with ``python -m gradstack_distributed.run -n 2 script.py``::

    import gradstack_tensor as gt
    import gradstack_distributed as dist
    from gradstack_distributed.algorithms import Join, Joinable, JoinHook

    class CounterJoinHook(JoinHook):
        def __init__(self, counter):
            self.counter = counter

        def main_hook(self):            # a joined rank shadows the all-reduce with zeros
            dist.all_reduce(gt.zeros(1))

    class Counter(Joinable):
        def __init__(self):
            super().__init__()
            self.count = gt.zeros(1)

        def __call__(self):
            Join.notify_join_context(self)
            t = gt.ones(1)
            dist.all_reduce(t)
            self.count += t

        def join_hook(self, **kwargs):
            return CounterJoinHook(self)

        @property
        def join_device(self):
            return gt.device("cpu")

        @property
        def join_process_group(self):
            return dist.group.WORLD

    dist.init_process_group("mpi")
    counter = Counter()
    with Join([counter]):
        for _ in range(5 + dist.get_rank()):     # rank 1 has one input more
            counter()
    print(counter.count.item())    # 10.0 on rank 0 (5 inputs, each counted by both
                                   # ranks), 11.0 on rank 1 (one more, counted alone)
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any, NamedTuple

import gradstack_tensor as gt

from ..collectives import all_reduce
from ..process_group import get_rank

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """A join hook: the two entry points of a :class:`Joinable` in :class:`Join`.

    ``main_hook()`` runs repeatedly on a joined rank while some rank still trains, and
    shadows the collectives of one training iteration; ``post_hook(is_last_joiner)`` runs
    once every rank joined.  Subclass it and override either.

    Examples
    --------
    >>> JoinHook().main_hook() is None and JoinHook().post_hook(True) is None
    True
    """

    def main_hook(self) -> None:
        """Shadow the collectives of one training iteration (forward, backward, step)."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank joined; ``is_last_joiner`` is True on the ranks that joined
        last."""


class Joinable(ABC):
    """The abstract base of classes that take part in :class:`Join`.

    A joinable implements :meth:`join_hook` (returns its :class:`JoinHook`),
    :attr:`join_device` and :attr:`join_process_group` (where Join's own all-reduces run),
    calls ``Joinable.__init__`` from its constructor, and calls
    :meth:`Join.notify_join_context` at the start of each iteration, before its own
    collectives.  ``DistributedDataParallel`` is one.
    """

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The :class:`JoinHook` of this joinable; ``kwargs`` are those given to
        :class:`Join` (the same for every joinable of one context)."""
        ...

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of Join's own all-reduces (``gradstack.device("cpu")``)."""
        ...

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of Join's own all-reduces."""
        ...


class _JoinConfig(NamedTuple):
    """What Join tells each joinable: whether join is on, whether to throw on early
    termination, and whether it is the first joinable (which makes Join's calls)."""

    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Join:
    """The join context manager: ranks with uneven inputs finish the loop together.

    Parameters
    ----------
    joinables : list of Joinable
        The participating joinables; their hooks run in this order.  All must use the
        same process group (ValueError otherwise); the first one's device is used.
    enable : bool
        False turns the context manager off (for inputs known to be even).
    throw_on_early_termination : bool
        Raise on every rank as soon as one rank ran out of inputs (RuntimeError:
        ``"Rank R exhausted all inputs."`` on that rank, ``"Detected at least one rank that
        exhausted inputs. Throwing across all ranks."`` on the others), instead of
        shadowing its collectives.
    **kwargs
        Passed to every joinable's ``join_hook`` (DDP takes
        ``divide_by_initial_world_size``).

    See Note [Join's collectives].  As in torch, the joinables keep the configuration after
    the ``with`` block (their iterations go on announcing themselves to Join).

    Examples
    --------
    ::

        with Join([ddp_model]):          # or: with ddp_model.join():
            for x, y in my_uneven_batches:
                loss_fn(ddp_model(x), y).backward()
                optimizer.step()
        # every rank gets here, with the model of the last rank to join
    """

    def __init__(
        self,
        joinables: list[Joinable],
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs,
    ):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        is_first_joinable = True
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig(
                enable=self._enable,
                throw_on_early_termination=self._throw_on_early_termination,
                is_first_joinable=is_first_joinable,
            )
            is_first_joinable = False

    def _extract_dist_info(self) -> None:
        process_group = None
        device = None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        self._rank = get_rank(self._process_group)
        self._device = device

    def __enter__(self) -> None: ...

    def __exit__(
        self,
        type: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Run the main hooks until every rank joined, then the post-hooks.

        An exception raised inside the block propagates at once (no hook runs).  With
        ``throw_on_early_termination`` a rank that joins while others train raises
        RuntimeError.
        """
        if not self._enable or type:
            return  # propagate the exception directly if one was raised

        all_procs_joined = False
        is_last_joiner = True

        i = 0
        warn_threshold = 1000
        warnings.simplefilter("once")

        while not all_procs_joined:
            if i > warn_threshold:
                warnings.warn(
                    "Detected uneven input skew of greater than "
                    f"{warn_threshold}. This means that rank "
                    f"{self._rank} has at least {warn_threshold} "
                    f"fewer inputs than other currently-active ranks. "
                    "This level of skew could lead to performance "
                    "degradation during training.",
                    stacklevel=2,
                )
            # shadow the all-reduce of notify_join_context in the non-joined processes
            num_nonjoined_procs = self._get_num_nonjoined_procs()
            if num_nonjoined_procs == 0:
                all_procs_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()

                for join_hook in self._join_hooks:
                    join_hook.main_hook()

                is_last_joiner = False
                i += 1

        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self) -> float:
        """The number of ranks still training (each matches this from
        ``notify_join_context`` with a one; joined ranks add zeros)."""
        num_nonjoined_procs = gt.zeros(1, device=self._device)
        all_reduce(num_nonjoined_procs, group=self._process_group)
        return num_nonjoined_procs.item()

    def _notify_procs_to_terminate(self):
        """Tell the training ranks to raise, and raise here."""
        ones = gt.ones(1, device=self._device)
        all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Tell the join context that this rank has not joined yet (call it at the start
        of each iteration of ``joinable``, before its collectives).

        Only the first joinable of the context communicates (an asynchronous
        ``all_reduce`` of a one, whose :class:`Work` it returns; None for the others, or
        when join is off).  With ``throw_on_early_termination`` it also checks, blocking,
        whether a rank ran out of inputs, and raises RuntimeError if so.
        """
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(
                f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
            )

        join_config = joinable._join_config
        # the first joinable is responsible for the collective communications
        if not join_config.is_first_joinable or not join_config.enable:
            return None

        device = joinable.join_device
        process_group = joinable.join_process_group

        # schedule an all-reduce to indicate that the caller has not yet joined
        ones = gt.ones(1, device=device)
        work = all_reduce(ones, group=process_group, async_op=True)

        if join_config.throw_on_early_termination:
            # check whether uneven inputs have been detected
            zeros = gt.zeros(1, device=device)
            all_reduce(zeros, group=process_group)
            should_throw = zeros.item()
            if should_throw:
                raise RuntimeError(
                    "Detected at least one rank that exhausted inputs. Throwing across all ranks."
                )
        return work
