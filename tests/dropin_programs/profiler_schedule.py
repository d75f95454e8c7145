# A short torch program written for gradstack's drop-in tests (issue 35): a training loop
# under torch.profiler with a schedule, a TensorBoard trace handler and record_function;
# it prints what does not depend on timings (cycles, steps, the ops' call counts).
import json
import os
import tempfile

import torch
import torch.nn as nn
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
logdir = tempfile.mkdtemp()
tb = tensorboard_trace_handler(logdir, worker_name="worker0")
cycles = []


def on_ready(prof):
    rows = {e.key: e.count for e in prof.key_averages()}
    cycles.append(prof.step_num)
    print(
        f"cycle ending at step {prof.step_num}: steps={rows.get('ProfilerStep*')}, "
        f"forward blocks={rows.get('forward')}, addmm={rows.get('aten::addmm')}"
    )
    tb(prof)


with profile(
    activities=[ProfilerActivity.CPU],
    schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
    on_trace_ready=on_ready,
    record_shapes=True,
) as prof:
    for _ in range(10):
        with record_function("forward"):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()

print("cycles:", cycles, "last loss:", round(loss.item(), 5))
files = sorted(os.listdir(logdir))
print(
    len(files),
    "trace files",
    all(f.startswith("worker0.") and f.endswith(".pt.trace.json") for f in files),
)
with open(os.path.join(logdir, files[-1])) as f:
    names = {e.get("name") for e in json.load(f)["traceEvents"]}
print(sorted(n for n in names if n and n.startswith("ProfilerStep#")), "forward" in names)
shapes = [
    e.input_shapes for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::addmm"
]
print(sorted(map(str, shapes)))
