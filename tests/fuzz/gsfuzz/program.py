"""Programs and statements.

Examples
--------
>>> p = Program(seed=1, index=2, stmts=[Stmt("x0 = torch.ones(2)", checks=("x0",))])
>>> print(p.script("torch"))
import torch
<BLANKLINE>
x0 = torch.ones(2)
print('x0 =', x0)
"""

from __future__ import annotations

import dataclasses

__all__ = ["PHASES", "Program", "Stmt"]

# fwd: forward ops; bwd1: first-order backward/grad and what reads .grad; bwd2: the pass
# through a create_graph=True gradient (second order)
PHASES = ("fwd", "bwd1", "bwd2")


@dataclasses.dataclass(frozen=True)
class Stmt:
    """One statement of torch code.

    Attributes
    ----------
    code : str
        The text (may span lines: ``with torch.no_grad():`` blocks).
    defines : tuple of str
        Names the statement binds.
    uses : tuple of str
        Program names it reads (leaves and intermediates; ``torch`` excluded).
    checks : tuple of str
        Expressions snapshotted after it runs and compared between the libraries.
    tag : str
        What it exercises (``"mul_.alias"``, ``"getitem.adv"``): groups failures.
    phase : str
        One of :data:`PHASES`.
    """

    code: str
    defines: tuple = ()
    uses: tuple = ()
    checks: tuple = ()
    tag: str = ""
    phase: str = "fwd"


@dataclasses.dataclass
class Program:
    """A generated program; ``(seed, index)`` regenerates it."""

    seed: int
    index: int
    stmts: list

    def script(self, module: str = "torch", *, prints: bool = True) -> str:
        """The program as a standalone script importing ``module`` as ``torch``."""
        head = "import torch" if module == "torch" else f"import {module} as torch"
        lines = [head, ""]
        for st in self.stmts:
            lines.append(st.code)
            if prints:
                for c in st.checks:
                    lines.append(f"print('{c} =', {c})")
        return "\n".join(lines)

    def text(self) -> str:
        return "\n".join(st.code for st in self.stmts)
