"""The liveness hub of a job: a small process that knows which ranks are still there.

Rank 0 starts it in ``init_process_group`` (see :mod:`.liveness` and Note [No rank left
waiting] there) as ``python -I -S _liveness_hub.py WORLD_SIZE`` with the job's token on
stdin; it prints the TCP port it listens on and waits for one connection per rank.  It uses
the standard library only, so it starts in milliseconds and imports nothing of gradstack.

The protocol is lines of text:

- rank -> hub ``HELLO <token> <rank> <pid> <host>`` once, after connecting;
- rank -> hub ``LEFT <json>`` just before the rank closes its connection on purpose
  (``destroy_process_group``, the end of the script, an uncaught exception): the json says
  how it left and which calls it had made (its ledgers);
- hub -> every other rank ``LEFT <json>``: the notice of a rank that left, or
  ``{"rank": R, "how": null, ...}`` when its connection closed without one (the kernel
  closes a process's sockets however it ends: SIGKILL, ``os._exit``, a crash).

The hub prints a line naming the first rank that ended without a notice (a launcher such as
MPICH's ``mpiexec`` may kill the other ranks before they can say anything), and exits once
every rank's connection is closed.  It serves from a forked child (the process rank 0
started ends at once), and in a session of its own, so that a launcher's kill of the ranks
does not take it before it reported, and nobody needs to wait for it.  It ignores SIGINT:
Ctrl-C reaches the ranks, and the hub ends after them.
"""

from __future__ import annotations

import hmac
import json
import os
import selectors
import signal
import socket
import sys
import time

SETUP_SECONDS = 300.0  # every rank connects within this, or the hub stops accepting
SEND_SECONDS = 2.0  # a rank that does not read its notices for this long is skipped


class _Client:
    __slots__ = ("sock", "buffer", "rank", "pid", "host", "notice")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = b""
        self.rank = -1
        self.pid = 0
        self.host = ""
        self.notice: dict | None = None


def _send(client: _Client, line: bytes) -> None:
    try:
        client.sock.sendall(line)
    except OSError:
        pass  # it is gone or going: its own end of file comes through select


def serve(listener: socket.socket, world: int, token: str) -> None:
    """Accept ``world`` ranks, relay every departure to the others, return when all left."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    clients: dict[socket.socket, _Client] = {}
    told: list[bytes] = []  # every departure relayed so far, for a rank that says HELLO late
    hello = 0
    departures = 0
    accepting = True
    setup_deadline = time.monotonic() + SETUP_SECONDS

    def depart(client: _Client) -> None:
        nonlocal departures
        selector.unregister(client.sock)
        del clients[client.sock]
        client.sock.close()
        if client.rank < 0:
            return
        notice = client.notice or {
            "rank": client.rank, "how": None, "pid": client.pid, "host": client.host,
        }  # fmt: skip
        departures += 1
        if client.notice is None and departures == 1:
            _report(client, world)
        line = b"LEFT " + json.dumps(notice).encode() + b"\n"
        told.append(line)
        for other in list(clients.values()):
            if other.rank >= 0:
                _send(other, line)

    while accepting or clients:
        timeout = max(0.0, setup_deadline - time.monotonic()) if accepting else None
        events = selector.select(timeout)
        if accepting and time.monotonic() >= setup_deadline:
            accepting = False
            selector.unregister(listener)
            listener.close()
        for key, _ in events:
            if key.data is None:
                if not accepting:
                    continue
                sock, _ = listener.accept()
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(SEND_SECONDS)
                clients[sock] = _Client(sock)
                selector.register(sock, selectors.EVENT_READ, True)
                continue
            client = clients.get(key.fileobj)  # type: ignore[call-overload]
            if client is None:
                continue
            try:
                data = client.sock.recv(65536)
            except (TimeoutError, BlockingIOError):
                continue
            except OSError:
                data = b""
            if not data:
                depart(client)
                continue
            client.buffer += data
            while b"\n" in client.buffer:
                line, client.buffer = client.buffer.split(b"\n", 1)
                if not _handle(client, line, token):
                    client.rank = -1  # not one of ours: drop it without a word
                    depart(client)
                    break
                if line.startswith(b"HELLO "):
                    hello += 1
                    # Note [A departure before a HELLO]: a rank may say HELLO after another
                    # already left (a fast rank's HELLO, notice and end of file can all be
                    # read before a slower rank's HELLO); it hears of those departures now
                    for news in told:
                        _send(client, news)
        if accepting and hello >= world:
            accepting = False
            selector.unregister(listener)
            listener.close()


def _handle(client: _Client, line: bytes, token: str) -> bool:
    """Take one line from a rank; False if it is not a line of this job's protocol."""
    if line.startswith(b"HELLO "):
        parts = line.decode(errors="replace").split(" ")
        if len(parts) != 5 or client.rank >= 0:
            return False
        if not hmac.compare_digest(parts[1], token):
            return False
        try:
            client.rank, client.pid = int(parts[2]), int(parts[3])
        except ValueError:
            return False
        client.host = parts[4]
        return True
    if line.startswith(b"LEFT ") and client.rank >= 0:
        try:
            notice = json.loads(line[5:])
        except ValueError:
            return False
        if not isinstance(notice, dict):
            return False
        notice["rank"], notice["pid"], notice["host"] = client.rank, client.pid, client.host
        client.notice = notice
        return True
    return False


def _report(client: _Client, world: int) -> None:
    try:
        sys.stderr.write(
            f"[gradstack.distributed] rank {client.rank} of {world} (pid {client.pid} on "
            f"{client.host}) ended without a leaving notice: it was killed by a signal "
            "(SIGKILL, SIGTERM ...), called os._exit(), or crashed.  Ranks waiting for it "
            "in a collective raise DistBackendError.\n"
        )
        sys.stderr.flush()
    except OSError:
        pass


def main(argv: list[str]) -> int:
    world = int(argv[1])
    token = sys.stdin.readline().strip()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    backlog = min(world, 4096)
    try:  # IPv6 and IPv4 when the machine has both, else IPv4
        listener = socket.create_server(
            ("", 0), family=socket.AF_INET6, dualstack_ipv6=True, backlog=backlog
        )
    except (OSError, ValueError):
        listener = socket.create_server(("", 0), backlog=backlog)
    sys.stdout.write(f"{listener.getsockname()[1]}\n")
    sys.stdout.flush()
    sys.stdout.close()
    # rank 0 waits for this process to end: the hub serves in a child that nobody waits
    # for (init reaps it), so that it outlives rank 0 and leaves no zombie behind
    if os.fork() > 0:
        os._exit(0)
    serve(listener, world, token)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
