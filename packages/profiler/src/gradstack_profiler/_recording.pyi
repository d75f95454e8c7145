# Types of the compiled recorder (_recording.pyx), for mypy and the package's users.
from gradstack_tensor import DispatchLayer

__all__ = [
    "OP",
    "NODE",
    "USER",
    "END",
    "FREE",
    "OpRecorder",
    "NodeRecorder",
    "now_ns",
    "output_sequence_nr",
]

OP: int
NODE: int
USER: int
END: int
FREE: int

def now_ns() -> int: ...
def output_sequence_nr(out: object) -> int: ...

class OpRecorder(DispatchLayer):
    def __init__(self, records: list, priority: int) -> None: ...

class NodeRecorder:
    def __init__(self, records: list) -> None: ...
    def begin(self, node: object) -> int: ...
    def end(self, token: int) -> None: ...
