"""Which ranks are still there: leaving notices, the liveness hub, and the calls' ledgers.

Note [No rank left waiting]
MPI has no word for "a peer went away": a rank that leaves while the others wait in a
collective leaves them waiting until their timeout (30 minutes by default), unless the
launcher happens to kill the job.  torch's gloo learns it from its TCP connections
("Connection closed by peer").  gradstack.distributed does the same beside MPI:

- **A liveness channel.**  ``init_process_group`` has rank 0 start a small hub process
  (``_liveness_hub.py``, standard library only) and every rank open one TCP connection to
  it (the address, port and a random token go out by ``MPI_Bcast``).  The kernel closes a
  process's sockets however it ends, so the hub learns of every departure: SIGKILL,
  SIGTERM, ``os._exit``, a crash included.  It relays each departure to every other rank.
  The hub is a process of its own, not a thread of rank 0: it keeps watching when rank 0
  is busy holding the GIL or is itself the one that left, and it exits once every rank's
  connection closed.
- **Leaving notices.**  A rank that leaves on its own says so first, with how it left:
  ``destroy_process_group()``, an ``atexit`` hook (the end of the script, ``sys.exit(n)``,
  an exception caught and the script ended), or the abort hook (an uncaught exception).
  The notice carries the rank's *ledgers*: for every communicator, how many calls it
  started and which of them it left unfinished, and how many point-to-point messages it
  sent to each rank.
- **Waits that listen.**  Every wait of gradstack.distributed polls its MPI requests
  (Note [Waiting with a deadline] in ``faults.py``); while it waits it also reads the
  hub's news, once a millisecond (never on the fast path: a call whose data is there
  returns before any of this, and a wait shorter than a millisecond does none of it).  A
  departed rank blocks a collective only if it never started it or left it unfinished, by
  its ledger; then the wait raises :class:`DistBackendError` naming the rank, how it left,
  and the call.  So a rank that finished its part of the last collective and called
  ``destroy_process_group()`` while a slower rank still completes that same collective
  breaks nothing: the end of a well-formed script stays silent.  A point-to-point receive
  waits while the departed sender's count says a message is still on its way.
- **Ranks that leave without a word** (a signal, ``os._exit``) have no ledger: a wait
  that involves them raises after a grace of half a second (completions already under way
  finish in it), and the hub prints a line naming the first such rank, since a launcher
  like MPICH's ``mpiexec`` kills the remaining ranks within milliseconds of such an exit,
  before they could report anything themselves.

After such an error the group is unusable (MPI cannot withdraw from a collective); left
uncaught, the error ends every rank through the abort hook.  ``GRADSTACK_LIVENESS=0`` (read
on rank 0) turns the channel off; ``GRADSTACK_LIVENESS_ADDR`` names the address of rank 0's
machine that the other machines' ranks connect to (default: its host name; ranks on rank
0's machine use the loopback).  If a rank cannot reach the hub, every rank warns and runs
without it (departures are then caught by the timeout or the launcher, as before).

Examples
--------
>>> from gradstack_distributed.liveness import Ledger
>>> ledger = Ledger("world", range(2))
>>> first, second = ledger.begin(), ledger.begin()
>>> ledger.end(first)
>>> ledger.as_notice()
{'started': 2, 'open': [1], 'sent': {}}
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import select
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np

__all__ = [
    "Ledger",
    "Departure",
    "GRACE_SECONDS",
    "reset",
    "start",
    "leave",
    "is_watching",
    "collective_problem",
    "peer_problem",
]

GRACE_SECONDS = 0.5  # a departure without a notice blocks a wait after this long
_HUB = Path(__file__).with_name("_liveness_hub.py")
_INFO_BYTES = 512
_CONNECT_SECONDS = 20.0
_HUB_START_SECONDS = 30.0


class Ledger:
    """The calls this rank made on one communicator (for its leaving notice).

    ``begin()`` numbers a call (every rank of the group numbers its calls the same way,
    as MPI requires them in the same order) and ``end(seq)`` marks it finished; ``sent``
    and ``received`` count point-to-point messages by the peer's global rank.  A ledger
    registers itself under ``key`` for this rank's leaving notice (``reset()`` forgets).
    """

    __slots__ = ("key", "members", "started", "open", "sent", "received")

    def __init__(self, key: str, members: Iterable[int]):
        self.key = key
        self.members = frozenset(members)
        self.started = 0
        self.open: set[int] = set()
        self.sent: dict[int, int] = {}
        self.received: dict[int, int] = {}
        _ledgers[key] = self

    def begin(self) -> int:
        seq = self.started
        self.started = seq + 1
        self.open.add(seq)
        return seq

    def end(self, seq: int) -> None:
        self.open.discard(seq)

    def as_notice(self) -> dict:
        return {
            "started": self.started,
            "open": sorted(self.open),
            "sent": {str(k): v for k, v in self.sent.items()},
        }


_ledgers: dict[str, Ledger] = {}


class Departure:
    """What this rank knows about a rank that left: how, and its ledgers (None: no notice)."""

    __slots__ = ("rank", "how", "pid", "host", "ledgers", "learned")

    def __init__(self, notice: dict, learned: float):
        self.rank = int(notice["rank"])
        self.how = notice.get("how")
        self.pid = notice.get("pid")
        self.host = notice.get("host")
        self.ledgers = notice.get("ledgers") if self.how is not None else None
        self.learned = learned

    def words(self) -> str:
        who = f"rank {self.rank}" + (f" (pid {self.pid} on {self.host})" if self.pid else "")
        if self.how is None:
            return (
                f"{who} ended without a leaving notice (connection closed by peer): it was "
                "killed by a signal (SIGKILL, SIGTERM ...), called os._exit(), or crashed"
            )
        return f"{who} left the job: it {self.how}"


class _Channel:
    """This process's connection to the hub, and what it heard."""

    def __init__(self, sock: socket.socket, rank: int, world: int):
        self.sock = sock
        self.rank = rank
        self.world = world
        self.buffer = b""
        self.departures: dict[int, Departure] = {}
        self.hub_gone = False
        self.poller = select.poll()  # asks without raising (a recv that would block does)
        self.poller.register(sock, select.POLLIN)

    def poll(self, now: float) -> None:
        """Read whatever the hub sent, without blocking."""
        if self.hub_gone or not self.poller.poll(0):
            return
        while True:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:  # the hub is gone: no more news, but nobody is known to have left
                self.hub_gone = True
                break
            self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.startswith(b"LEFT "):
                try:
                    d = Departure(json.loads(line[5:]), now)
                except (ValueError, KeyError, TypeError):
                    continue
                self.departures.setdefault(d.rank, d)

    def close(self, notice: dict | None) -> None:
        sock = self.sock
        try:
            if notice is not None:
                sock.setblocking(True)
                sock.settimeout(1.0)
                sock.sendall(b"LEFT " + json.dumps(notice).encode() + b"\n")
                sock.shutdown(socket.SHUT_WR)
                sock.setblocking(False)
                try:  # unread news would make close() reset the connection: drain it
                    while sock.recv(65536):
                        pass
                except OSError:
                    pass
        except OSError:
            pass
        finally:
            sock.close()


_channel: _Channel | None = None
_registered = False


def is_watching() -> bool:
    """Whether this process is connected to a liveness hub."""
    return _channel is not None


def reset() -> None:
    """Forget the ledgers of destroyed groups (``init_process_group`` starts afresh)."""
    _ledgers.clear()


def start(comm, wait) -> None:
    """Connect every rank of ``comm`` (the world) to a new hub that rank 0 starts.

    Collective over ``comm``.  ``wait(requests, what)`` waits for MPI requests with the
    group's deadline.  On any failure every rank warns and goes on without a hub.
    """
    global _channel, _registered
    MPI = sys.modules["mpi4py.MPI"]
    rank, world = comm.Get_rank(), comm.Get_size()
    if world == 1:
        return
    info = np.zeros(_INFO_BYTES, dtype=np.uint8)
    if rank == 0:
        text = _start_hub(world)
        raw = text.encode()[:_INFO_BYTES]
        info[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    wait([comm.Ibcast([info, MPI.BYTE], 0)], "init_process_group: reaching the liveness hub")
    text = info.tobytes().rstrip(b"\0").decode()
    sock, failure = None, ""
    if text:
        sock, failure = _connect(text, rank)
    flag = np.array([1 if sock is not None else 0], dtype=np.int32)
    wait(
        [comm.Iallreduce(MPI.IN_PLACE, [flag, MPI.INT32_T], MPI.MIN)],
        "init_process_group: reaching the liveness hub",
    )
    if flag[0] == 1 and sock is not None:
        _channel = _Channel(sock, rank, world)
        if not _registered:
            _registered = True
            atexit.register(_at_exit)
            os.register_at_fork(after_in_child=_forget_in_child)
        return
    if sock is not None:
        sock.close()
    if text:
        reason = failure or "another rank could not reach it"
        warnings.warn(
            f"gradstack.distributed: rank {rank} runs without the liveness hub ({reason}); a "
            "rank that leaves while others wait in a collective is noticed only by their "
            "timeout or by the launcher.  Set GRADSTACK_LIVENESS_ADDR to an address of rank "
            "0's machine that every machine reaches (see Note [No rank left waiting]).",
            RuntimeWarning,
            stacklevel=3,
        )


def _start_hub(world: int) -> str:
    """Rank 0: start the hub; returns "host port token hostname", or "" (none)."""
    if os.environ.get("GRADSTACK_LIVENESS", "1").strip().lower() in ("0", "false", "no", "off"):
        return ""
    token = secrets.token_hex(16)
    try:
        # a session of its own: a launcher that kills the ranks' process group must not
        # take the hub with them before it reported (see the hub's docstring)
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(_HUB), str(world)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
            start_new_session=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"{token}\n".encode())
        proc.stdin.close()
        ready, _, _ = select.select([proc.stdout], [], [], _HUB_START_SECONDS)
        line = proc.stdout.readline() if ready else b""
        proc.stdout.close()
        port = int(line)
        proc.wait(_HUB_START_SECONDS)  # it forks the hub and ends
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        warnings.warn(
            f"gradstack.distributed: the liveness hub did not start ({exc!r})",
            RuntimeWarning,
            stacklevel=4,
        )
        return ""
    hostname = socket.gethostname()
    address = os.environ.get("GRADSTACK_LIVENESS_ADDR", "").strip() or hostname
    return f"{address} {port} {token} {hostname}"


def _connect(text: str, rank: int):
    """Connect to the hub and say hello; returns (socket, "") or (None, why not)."""
    try:
        address, port, token, hub_hostname = text.split(" ")
    except ValueError:
        return None, f"a malformed hub address {text!r}"
    hostname = socket.gethostname()
    target = "127.0.0.1" if hostname == hub_hostname else address
    try:
        sock = socket.create_connection((target, int(port)), timeout=_CONNECT_SECONDS)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(f"HELLO {token} {rank} {os.getpid()} {hostname}\n".encode())
        sock.setblocking(False)
    except OSError as exc:
        return None, f"it could not connect to {target}:{port}: {exc}"
    return sock, ""


def leave(how: str) -> None:
    """Tell the other ranks that this one leaves (``how``: what it did), then disconnect."""
    global _channel
    channel, _channel = _channel, None
    if channel is None:
        return
    notice = {"how": how, "ledgers": {key: led.as_notice() for key, led in _ledgers.items()}}
    channel.close(notice)


def _at_exit() -> None:
    leave(
        "exited (the end of its script, sys.exit(), or an exception it caught) without "
        "calling destroy_process_group()"
    )


def _forget_in_child() -> None:
    """A forked child (a DataLoader worker ...) is not a rank: drop its copy of the socket."""
    global _channel
    if _channel is not None:
        _channel.sock.close()  # the child's descriptor only: the parent's stays connected
        _channel = None


# ---------------------------------------------------------------------------------------
# Does a departure block this wait?


def _departures(now: float) -> dict[int, Departure] | None:
    channel = _channel
    if channel is None:
        return None
    channel.poll(now)
    return channel.departures or None


def collective_problem(ledger: Ledger, seqs: Iterable[int], now: float) -> str | None:
    """Why the calls ``seqs`` of ``ledger`` cannot complete (a member left before joining
    or finishing one of them), or None."""
    departures = _departures(now)
    if departures is None:
        return None
    seqs = tuple(seqs)
    for rank, d in departures.items():
        if rank not in ledger.members:
            continue
        if d.ledgers is None:
            if now - d.learned >= GRACE_SECONDS:
                return f"{d.words()}; it was part of this call"
            continue
        entry = d.ledgers.get(ledger.key) or {}
        started, unfinished = entry.get("started", 0), entry.get("open", ())
        if max(seqs) >= started:
            return f"{d.words()}, before it joined this call"
        if any(s in unfinished for s in seqs):
            return f"{d.words()}, without finishing this call"
    return None


def peer_problem(
    ledger: Ledger, peer: int | None, me: int, now: float, *, receiving: bool,
    counted: bool = True,
) -> str | None:  # fmt: skip
    """Why a send to (or a receive from) ``peer`` (a global rank; None: any member) cannot
    complete because a rank left, or None.  ``counted``: a receive still waiting for its
    header, which may compare the messages it received with those the departed rank sent."""
    departures = _departures(now)
    if departures is None:
        return None
    if peer is None:
        # Note [A receive from any rank]: it can still complete while one member that
        # might send is alive, so it fails only when every other member has left, and
        # then names them all, in rank order (not in the order their notices arrived).
        others = sorted(r for r in ledger.members if r != me)
        reasons = [_departure_problem(ledger, departures.get(r), r, me, now, receiving, counted)
                   for r in others]  # fmt: skip
        if not others or any(r is None for r in reasons):
            return None
        return "; ".join(reasons)  # type: ignore[arg-type]
    if peer == me or peer not in ledger.members:
        return None
    return _departure_problem(ledger, departures.get(peer), peer, me, now, receiving, counted)


def _departure_problem(
    ledger: Ledger, d, rank: int, me: int, now: float, receiving: bool, counted: bool
) -> str | None:
    """Why ``rank``'s departure ``d`` (None: it has not left) stops a call with it."""
    if d is None:
        return None
    if receiving and counted and d.ledgers is not None:
        entry = d.ledgers.get(ledger.key) or {}
        if ledger.received.get(rank, 0) >= entry.get("sent", {}).get(str(me), 0):
            return f"{d.words()}, and nothing it sent to this rank is still on its way"
    if now - d.learned >= GRACE_SECONDS:
        return f"{d.words()}; this {'receive' if receiving else 'send'} needed it"
    return None
