"""The "Fundamentals of Autograd" tutorial, on gradstack.

The tutorial's code (the spec in ``seeds/000``), cell by cell, with ``import torch``
replaced by ``import gradstack as torch``.  Where the notebook *shows* a plot or a value,
this script saves the plot to ``examples/out/`` or prints the value.  (The test
``tests/test_tutorial_seed.py`` runs the seed's own text, unchanged, and checks every
printed claim with numbers.)

    python examples/tutorial.py
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import gradstack as torch  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from gradstack.autograd.graph import GraphvizMissingError, make_dot, render_dot  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
OUT.mkdir(exist_ok=True)
torch.manual_seed(0)
pictures = []


def save_graph_picture(tensor, name, **make_dot_args):
    """The picture of ``tensor``'s backward graph as ``out/<name>.svg`` (torchviz's make_dot,
    for gradstack), or its DOT text and how to get the picture when Graphviz is missing."""
    try:
        graph = make_dot(tensor, **make_dot_args)
        pictures.append(render_dot(graph, OUT / f"{name}.svg"))
    except GraphvizMissingError as e:
        print(f"no picture of the graph ({name}): {e}")


# -- A simple example ---------------------------------------------------------------------
a = torch.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
print(a)

b = torch.sin(a)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(a.detach(), b.detach(), marker="o")
ax.set(title="b = sin(a)", xlabel="a", ylabel="b")
fig.tight_layout()
fig.savefig(OUT / "tutorial_sin.png", dpi=100)
print(b)

c = 2 * b
print(c)
d = c + 1
print(d)
out = d.sum()
print(out)

print("d:")
print(d.grad_fn)
print(d.grad_fn.next_functions)
print(d.grad_fn.next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
print("\nc:")
print(c.grad_fn)
print("\nb:")
print(b.grad_fn)
print("\na:")
print(a.grad_fn)
# the same graph as a picture: nodes, edges, the leaf `a` and what each node saved
save_graph_picture(out, "tutorial_graph", params={"a": a}, show_saved=True)

out.backward()
print(a.grad)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(a.detach(), a.grad.detach(), marker="o", label="a.grad")
ax.plot(a.detach(), 2 * torch.cos(a.detach()), "--", label="2 cos(a)")
ax.set(title="the gradient of sum(2 sin(a) + 1) is 2 cos(a)", xlabel="a")
ax.legend()
fig.tight_layout()
fig.savefig(OUT / "tutorial_grad.png", dpi=100)
plt.close("all")

# -- Autograd in training -----------------------------------------------------------------
BATCH_SIZE = 16
DIM_IN = 1000
HIDDEN_SIZE = 100
DIM_OUT = 10


class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(1000, 100)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(100, 10)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
model = TinyModel()
print(model)

print(model.layer2.weight[0][0:10])  # just a small slice
print(model.layer2.weight.grad)

optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
prediction = model(some_input)
loss = (ideal_output - prediction).pow(2).sum()
print(loss)
# the model's graph, its parameters named as the model names them
save_graph_picture(loss, "tutorial_model_graph", params=dict(model.named_parameters()))

loss.backward()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

optimizer.step()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

print(model.layer2.weight.grad[0][0:10])
for i in range(0, 5):  # noqa: B007 - the tutorial's own loop
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()
print(model.layer2.weight.grad[0][0:10])
optimizer.zero_grad()
print(model.layer2.weight.grad[0][0:10])

# -- Turning autograd off and on ----------------------------------------------------------
a = torch.ones(2, 3, requires_grad=True)
print(a)
b1 = 2 * a
print(b1)
a.requires_grad = False
b2 = 2 * a
print(b2)

a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3
c1 = a + b
print(c1)
with torch.no_grad():
    c2 = a + b
print(c2)
c3 = a * b
print(c3)


def add_tensors1(x, y):
    return x + y


@torch.no_grad()
def add_tensors2(x, y):
    return x + y


a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3
c1 = add_tensors1(a, b)
print(c1)
c2 = add_tensors2(a, b)
print(c2)

x = torch.rand(5, requires_grad=True)
y = x.detach()
print(x)
print(y)

# -- In-place operations: the cell the tutorial shows raising -----------------------------
a = torch.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
try:
    torch.sin_(a)
except RuntimeError as e:
    print(f"RuntimeError, as the tutorial says: {e}")
else:
    raise SystemExit("torch.sin_(a) on a leaf that requires grad should have raised")

# -- The profiler -------------------------------------------------------------------------
device = torch.device("cpu")
run_on_gpu = False
if torch.cuda.is_available():
    device = torch.device("cuda")
    run_on_gpu = True

x = torch.randn(2, 3, requires_grad=True)
y = torch.rand(2, 3, requires_grad=True)
z = torch.ones(2, 3, requires_grad=True)

with torch.autograd.profiler.profile(use_cuda=run_on_gpu) as prf:
    for _ in range(1000):
        z = (z / x) * y

print(prf.key_averages().table(sort_by="self_cpu_time_total"))

# -- More autograd detail and the high-level API ------------------------------------------
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)  # stand-in for gradients
y.backward(v)
print(x.grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(1), torch.rand(1))  # arguments for the function
print(inputs)
print(torch.autograd.functional.jacobian(exp_adder, inputs))

inputs = (torch.rand(3), torch.rand(3))  # arguments for the function
print(inputs)
print(torch.autograd.functional.jacobian(exp_adder, inputs))


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


inputs = torch.randn(3)
my_gradients = torch.tensor([0.1, 1.0, 0.0001])
print(torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))

print(f"\nplots saved: {OUT / 'tutorial_sin.png'}, {OUT / 'tutorial_grad.png'}")
if pictures:
    print(f"graph pictures saved: {', '.join(str(p) for p in pictures)}")
