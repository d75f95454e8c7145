"""``python -m gradstack.distributed.run -n N script.py [args]``: run a script on N MPI
ranks (gradstack's ``torchrun``; see :mod:`gradstack_distributed.run`)."""

import sys

from gradstack_distributed.run import build_command, find_mpiexec, main

__all__ = ["main", "find_mpiexec", "build_command"]

if __name__ == "__main__":
    sys.exit(main())
