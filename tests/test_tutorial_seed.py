"""The "Fundamentals of Autograd" tutorial (seeds/000) runs unchanged on gradstack.

The code is taken from the seed file itself (a byte-for-byte copy lives in
``tests/seeds/``): the HTML wrapper is stripped, entities are unescaped, and the one line
``import torch`` becomes ``import gradstack as torch``; nothing else changes.  It runs as
a notebook would run it: top-level statement after top-level statement in one namespace,
with the value of each bare expression passed to ``sys.displayhook`` (the tutorial
*shows* its jacobian and vjp results that way instead of printing them), matplotlib on
the Agg backend, and each statement's stdout captured.

``test_tutorial_runs_unchanged`` checks that it runs to the end; the other tests check,
with numbers, every claim the tutorial's text makes about what it prints.

Note [Checking printed values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Printed tensors carry 4 significant decimals, so claims are checked on the printed text
at that precision (``PRINT_ATOL``), and, where the namespace still holds the objects
(the model, the doubling example's ``x``), against exact values too.
"""

from __future__ import annotations

import ast
import html
import io
import math
import re
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

SEED = Path(__file__).resolve().parent / "seeds" / "000_ab3f10e63ddc9797.txt"
PRINT_ATOL = 1.5e-4  # half a unit of the 4th decimal, plus float32 slack


# -------------------------------------------------------------------------------------
# extraction


def tutorial_source() -> str:
    """The tutorial's Python source, from the seed file's HTML wrapper."""
    text = SEED.read_text(encoding="utf-8")
    match = re.search(r"<pre[^>]*>(.*)</pre>", text, re.S)
    assert match, f"{SEED} has no <pre> block"
    return html.unescape(match.group(1))


def gradstack_source() -> str:
    """The tutorial with ``import torch`` replaced by ``import gradstack as torch``, and
    nothing else changed."""
    src = tutorial_source()
    lines = src.split("\n")
    hits = [i for i, line in enumerate(lines) if line == "import torch"]
    assert len(hits) == 1, f"expected exactly one 'import torch' line, found {len(hits)}"
    lines[hits[0]] = "import gradstack as torch"
    out = "\n".join(lines)
    assert out.replace("import gradstack as torch", "import torch") == src
    return out


def commented_error_cell() -> str:
    """The cell the tutorial shows only in a comment, because it raises: the ``::`` block
    that follows the note "The following code cell throws a runtime error"."""
    lines = tutorial_source().split("\n")
    start = next(i for i, line in enumerate(lines) if "throws a runtime error" in line)
    block = next(i for i in range(start, len(lines)) if lines[i].strip() == "# ::")
    code = []
    for line in lines[block + 1 :]:
        if not line.startswith("#"):
            break
        body = line[1:]
        if body.strip():
            assert body.startswith("    "), f"unexpected line in the cell: {line!r}"
            code.append(body[4:])
        elif code:
            break
    assert any("torch.sin_(a)" in c for c in code), code
    return "\n".join(code)


# -------------------------------------------------------------------------------------
# running


@dataclass
class Step:
    source: str
    stdout: str = ""
    displayed: list = field(default_factory=list)


@dataclass
class Run:
    steps: list
    namespace: dict
    error: BaseException | None = None
    failed_source: str | None = None

    def find(self, source: str, occurrence: int = 0) -> Step:
        """The ``occurrence``-th executed top-level statement whose source is ``source``."""
        hits = [s for s in self.steps if s.source == source]
        if len(hits) <= occurrence:
            where = (
                f"; the run stopped at {self.failed_source!r} with {self.error!r}"
                if self.error
                else ""
            )
            pytest.fail(f"statement {source!r} (#{occurrence}) was not executed{where}")
        return hits[occurrence]

    def printed(self, source: str, occurrence: int = 0) -> str:
        return self.find(source, occurrence).stdout


def run_notebook_style(source: str) -> Run:
    tree = ast.parse(source)
    namespace = {"__name__": "__main__"}
    steps = []
    run = Run(steps, namespace)
    current: list = []

    def displayhook(value):
        if value is not None:
            current.append(value)
            print(repr(value))

    old_hook = sys.displayhook
    sys.displayhook = displayhook
    try:
        for node in tree.body:
            seg = ast.get_source_segment(source, node)
            step = Step(seg)
            current = step.displayed
            out = io.StringIO()
            try:
                with redirect_stdout(out):
                    exec(compile(ast.Interactive([node]), str(SEED), "single"), namespace)
            except Exception as e:  # noqa: BLE001 - reported by the tests
                run.error, run.failed_source = e, seg
                step.stdout = out.getvalue()
                steps.append(step)
                break
            step.stdout = out.getvalue()
            steps.append(step)
    finally:
        sys.displayhook = old_hook
    return run


@pytest.fixture(scope="module")
def run():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is a test dependency")
    matplotlib.use("Agg", force=True)
    import gradstack
    import matplotlib.pyplot as plt

    gradstack.manual_seed(0)
    result = run_notebook_style(gradstack_source())
    plt.close("all")
    return result


def _needs(module: str):
    try:
        __import__(module)
    except ImportError:
        return pytest.mark.skip(reason=f"{module} is not installed yet")
    return lambda f: f


# -------------------------------------------------------------------------------------
# parsing printed tensors

_NUMBER = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)"


def values(text: str) -> np.ndarray:
    """The numbers inside the first ``tensor(...)`` of ``text``, flattened."""
    m = re.search(
        r"tensor\((.*?)(?:,\s*(?:requires_grad|grad_fn|dtype)=[^)]*)?\)\s*$", text.strip(), re.S
    )
    assert m, f"no tensor in {text!r}"
    body = m.group(1)
    return np.array([float(x) for x in re.findall(_NUMBER, body)], dtype=np.float64)


def all_tensor_values(text: str) -> list[np.ndarray]:
    """The numbers of every ``tensor(...)`` in ``text`` (a printed tuple of tensors)."""
    return [
        np.array([float(x) for x in re.findall(_NUMBER, body)])
        for body in re.findall(r"tensor\(\[(.*?)\]", text, re.S)
    ]


def node_names(text: str) -> list[str]:
    return re.findall(r"<(\w+) object at 0x[0-9a-fA-F]+>", text)


# -------------------------------------------------------------------------------------
# the tests


def test_source_is_the_seed_with_one_line_changed():
    src, ours = tutorial_source(), gradstack_source()
    diff = [(a, b) for a, b in zip(src.split("\n"), ours.split("\n")) if a != b]
    assert diff == [("import torch", "import gradstack as torch")]
    compile(ours, str(SEED), "exec")


def test_tutorial_runs_unchanged(run):
    if isinstance(run.error, ModuleNotFoundError) and run.error.name == "gradstack_functional":
        pytest.skip("gradstack_functional (functional-api) is not installed yet")
    assert run.error is None, f"the tutorial failed at {run.failed_source!r}: {run.error!r}"
    assert len(run.steps) == len(ast.parse(gradstack_source()).body)


def test_commented_cell_raises_runtime_error():
    import gradstack

    code = commented_error_cell()
    assert code.splitlines()[-1].strip() == "torch.sin_(a)"
    with pytest.raises(RuntimeError, match="leaf"):
        exec(compile(code, "<commented cell>", "exec"), {"torch": gradstack, "math": math})


def test_linspace_and_sin(run):
    a = values(run.printed("print(a)"))
    np.testing.assert_allclose(a, np.linspace(0, 2 * math.pi, 25), atol=PRINT_ATOL)
    assert "requires_grad=True" in run.printed("print(a)")
    b_text = run.printed("print(b)")
    assert "grad_fn=<SinBackward0>" in b_text
    np.testing.assert_allclose(values(b_text), np.sin(a), atol=PRINT_ATOL)
    c_text, d_text = run.printed("print(c)"), run.printed("print(d)")
    assert "grad_fn=<MulBackward0>" in c_text and "grad_fn=<AddBackward0>" in d_text
    np.testing.assert_allclose(values(c_text), 2 * np.sin(a), atol=2 * PRINT_ATOL)
    np.testing.assert_allclose(values(d_text), 2 * np.sin(a) + 1, atol=2 * PRINT_ATOL)
    out_text = run.printed("print(out)")
    assert "grad_fn=<SumBackward0>" in out_text
    assert values(out_text)[0] == pytest.approx(25.0, abs=1e-3)  # sum(2 sin a + 1)


def test_grad_fn_chain(run):
    lines = [
        "print(d.grad_fn)",
        "print(d.grad_fn.next_functions)",
        "print(d.grad_fn.next_functions[0][0].next_functions)",
        "print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)",
        "print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]"
        ".next_functions)",
    ]
    printed = [run.printed(s) for s in lines]
    assert node_names(printed[0]) == ["AddBackward0"]
    assert node_names(printed[1]) == ["MulBackward0"] and "(None, 0)" in printed[1]
    assert node_names(printed[2]) == ["SinBackward0"] and "(None, 0)" in printed[2]
    assert node_names(printed[3]) == ["AccumulateGrad"]
    assert printed[4].strip() == "()"
    assert node_names(run.printed("print(c.grad_fn)")) == ["MulBackward0"]
    assert node_names(run.printed("print(b.grad_fn)")) == ["SinBackward0"]
    assert run.printed("print(a.grad_fn)").strip() == "None"


def test_gradient_is_two_cos(run):
    a = values(run.printed("print(a)"))
    np.testing.assert_allclose(
        values(run.printed("print(a.grad)")), 2 * np.cos(a), atol=2 * PRINT_ATOL
    )


def test_training_step(run):
    weights = "print(model.layer2.weight[0][0:10])"
    grads = "print(model.layer2.weight.grad[0][0:10])"
    w0 = values(run.printed(weights, 0))
    assert run.printed("print(model.layer2.weight.grad)").strip() == "None"
    # the weights look like Linear(100, 10)'s init: uniform in +-1/sqrt(100)
    assert np.all(np.abs(w0) <= 0.1 + 1e-4)
    loss_text = run.printed("print(loss)")
    assert "grad_fn=<SumBackward0>" in loss_text and values(loss_text)[0] > 0
    # backward computes gradients but leaves the weights alone
    w_after_backward = values(run.printed(weights, 1))
    g1 = values(run.printed(grads, 0))
    np.testing.assert_array_equal(w_after_backward, w0)
    assert np.abs(g1).max() > 0.01
    # step changes them by -lr * grad, and leaves the gradient alone
    w_after_step = values(run.printed(weights, 2))
    assert np.any(w_after_step != w0)
    np.testing.assert_allclose(w_after_step, w0 - 0.001 * g1, atol=2 * PRINT_ATOL)
    np.testing.assert_array_equal(values(run.printed(grads, 1)), g1)


def test_gradients_accumulate_then_zero(run):
    import gradstack as torch

    grads = "print(model.layer2.weight.grad[0][0:10])"
    g1 = values(run.printed(grads, 2))  # printed just before the loop
    g6 = values(run.printed(grads, 3))  # after five more backward calls
    assert np.linalg.norm(g6) > 2 * np.linalg.norm(g1)
    # the five calls each added the gradient at the stepped weights: g6 = g1 + 5 * g'
    ns = run.namespace
    model = ns["model"]
    weight = model.layer2.weight
    saved = weight.grad.clone()
    weight.grad = None
    loss = (ns["ideal_output"] - model(ns["some_input"])).pow(2).sum()
    g_prime = torch.autograd.grad(loss, [weight])[0][0][0:10].numpy()
    weight.grad = saved
    np.testing.assert_allclose(g6, g1 + 5 * g_prime, rtol=1e-3, atol=5 * PRINT_ATOL)
    zeroed = run.printed(grads, 4)
    assert zeroed.strip() == "tensor([0., 0., 0., 0., 0., 0., 0., 0., 0., 0.])"
    assert all(bool((p.grad == 0).all()) for p in model.parameters())


def test_requires_grad_flag(run):
    assert "requires_grad=True" in run.printed("print(a)", 1)
    b1, b2 = run.printed("print(b1)"), run.printed("print(b2)")
    assert "grad_fn=<MulBackward0>" in b1
    assert "grad_fn" not in b2 and "requires_grad" not in b2
    np.testing.assert_array_equal(values(b1), np.full(6, 2.0))
    np.testing.assert_array_equal(values(b2), np.full(6, 2.0))


def test_no_grad_and_decorator(run):
    c1, c2, c3 = (run.printed(s) for s in ("print(c1)", "print(c2)", "print(c3)"))
    assert "grad_fn=<AddBackward0>" in c1 and "grad_fn" not in c2
    assert "grad_fn=<MulBackward0>" in c3
    np.testing.assert_array_equal(values(c1), np.full(6, 5.0))
    np.testing.assert_array_equal(values(c2), np.full(6, 5.0))
    np.testing.assert_array_equal(values(c3), np.full(6, 6.0))
    d1, d2 = run.printed("print(c1)", 1), run.printed("print(c2)", 1)
    assert "grad_fn=<AddBackward0>" in d1 and "grad_fn" not in d2
    np.testing.assert_array_equal(values(d2), np.full(6, 5.0))


def test_detach(run):
    x, y = run.printed("print(x)"), run.printed("print(y)")
    assert "requires_grad=True" in x and "requires_grad" not in y
    np.testing.assert_array_equal(values(x), values(y))
    assert np.all((values(x) >= 0) & (values(x) < 1))


def test_profiler_table(run):
    table = run.printed("print(prf.key_averages().table(sort_by='self_cpu_time_total'))")
    header = next(line for line in table.splitlines() if "# of Calls" in line)
    columns = re.split(r"\s{2,}", header.strip())
    calls_col = columns.index("# of Calls")
    rows = {}
    for line in table.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if (
            len(cells) == len(columns)
            and cells[0] != columns[0]
            and not set(line.strip()) <= {"-", " "}
        ):
            rows[cells[0]] = cells
    names = {re.sub(r"^aten::", "", name): cells for name, cells in rows.items()}
    assert "div" in names and "mul" in names, sorted(rows)
    assert int(names["div"][calls_col]) == 1000
    assert int(names["mul"][calls_col]) == 1000
    # sorted by self CPU time, as asked
    self_col = columns.index("Self CPU")
    order = list(rows)

    def us(text):
        num, unit = re.match(r"([\d.]+)\s*(\w+)", text).groups()
        return float(num) * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[unit]

    times = [us(rows[n][self_col]) for n in order]
    assert times == sorted(times, reverse=True)


def test_doubling_backward(run):
    ns = run.namespace
    x = ns["x"].detach().numpy().astype(np.float64)
    y = values(run.printed("print(y)", 1))
    k = round(math.log2(np.abs(y).max() / np.abs(x).max()))
    assert k >= 1
    np.testing.assert_allclose(y, x * 2**k, rtol=1e-3, atol=PRINT_ATOL * 2**k)
    assert np.linalg.norm(y) >= 1000 > np.linalg.norm(y) / 2
    grad = values(run.printed("print(x.grad)"))
    np.testing.assert_allclose(grad, np.array([0.1, 1.0, 0.0001]) * 2**k, rtol=1e-3)
    np.testing.assert_array_equal(
        ns["x"].grad.numpy(), np.array([0.1, 1.0, 0.0001], dtype=np.float32) * 2**k
    )


@_needs("gradstack_functional")
def test_jacobians(run):
    stmt = "torch.autograd.functional.jacobian(exp_adder, inputs)"
    for occurrence, n in ((0, 1), (1, 3)):
        inputs = all_tensor_values(run.printed("print(inputs)", occurrence))
        (jac,) = run.find(stmt, occurrence).displayed
        assert isinstance(jac, tuple) and len(jac) == 2
        jx, jy = (j.numpy() for j in jac)
        assert jx.shape == jy.shape == (n, n)
        np.testing.assert_allclose(jx, np.diag(2 * np.exp(inputs[0])), rtol=5e-4, atol=1e-6)
        np.testing.assert_array_equal(jy, 3 * np.eye(n))
        assert np.all(jx[~np.eye(n, dtype=bool)] == 0)


@_needs("gradstack_functional")
def test_vjp(run):
    stmt = "torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients)"
    (result,) = run.find(stmt).displayed
    output, vjp = (t.numpy() for t in result)
    inputs = run.namespace["inputs"].numpy()
    k = round(math.log2(np.abs(output).max() / np.abs(inputs).max()))
    np.testing.assert_array_equal(output, inputs * np.float32(2**k))
    np.testing.assert_array_equal(vjp, np.array([0.1, 1.0, 0.0001], np.float32) * 2**k)
