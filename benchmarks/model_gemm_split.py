"""Each model's training step split into GEMM time and everything else (issue 34).

For every model of ``model_zoo.py``, at one thread: the step's GEMMs timed alone with
numpy (the limit), gradstack's time in its GEMM ops and their backward nodes, the rest of
gradstack's step, and torch's time outside its GEMM, convolution and RNN primitives; the
goals are gradstack's GEMM time <= 1.05x the numpy limit and the rest <= 0.7x torch's
rest.  What counts where: Note [What counts as GEMM time] in ``gemm_split.py``.  The
step times come from interleaved rounds, as in ``models_vs_torch.py`` (which prints the
same table with ``--split``, next to the model table)::

    python benchmarks/model_gemm_split.py                 # hatch run models-split
    python benchmarks/model_gemm_split.py --only char_gpt lstm_lm --rounds 5
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from models_vs_torch import parse_args, run  # noqa: E402


def main(argv=None) -> int:
    return run(parse_args(argv, split_only=True))


if __name__ == "__main__":
    sys.exit(main())
