"""Worker: DistributedDataParallel against one process on the same global batches.

    python -m gradstack_distributed.run -n N train.py OUT_DIR

Rank r writes OUT_DIR/rank{r}.npz and OUT_DIR/rank{r}.json.  Rank 0 also trains the same
model in one process (no DDP) on the full global batches and saves those parameters.
The model is the digits MLP of examples/digits.py (64-128-64-10); the data is a fixed
random "digits-like" set (so this test needs no data download).
"""

import json
import sys
from pathlib import Path

import gradstack_autograd  # noqa: F401 - autograd layer
import gradstack_distributed as dist
import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
import numpy as np
from gradstack_nn import optim

OUT = Path(sys.argv[1])
STEPS = 100
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
arrays: dict[str, np.ndarray] = {}
facts: dict[str, object] = {}

data_rng = np.random.default_rng(0)
X = data_rng.random((720, 64))
TEACHER = data_rng.standard_normal((64, 10))
Y = np.argmax(X @ TEACHER + 0.5 * data_rng.standard_normal((720, 10)), axis=1).astype(np.int64)


def digits_mlp():
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)
    )  # fmt: skip


def batches(global_batch: int, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.choice(len(X), size=global_batch, replace=False) for _ in range(steps)]


def xy(idx, dtype):
    return gt.from_numpy(X[idx].astype(dtype)), gt.from_numpy(Y[idx])


def params_of(model) -> dict:
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def make_optimizer(name, params):
    if name == "sgd_momentum":
        return optim.SGD(params, lr=0.05, momentum=0.9)
    if name == "adam":
        return optim.Adam(params, lr=1e-3)
    raise ValueError(name)


def train_ddp(dtype, opt_name, global_batch, steps, seed, view=False):
    gt.manual_seed(100 + rank)  # different initial weights per rank: DDP must align them
    model = digits_mlp().to(getattr(gt, dtype))
    ddp = dist.DistributedDataParallel(model, gradient_as_bucket_view=view)
    initial = params_of(model)
    opt = make_optimizer(opt_name, ddp.parameters())
    local = global_batch // world
    for idx in batches(global_batch, steps, seed):
        x, y = xy(idx[rank * local : (rank + 1) * local], dtype)
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    if view:  # every .grad lies in its bucket: consecutive in memory, bucket by bucket
        params = list(model.parameters())
        facts["view/adjacent"] = [
            params[b[i + 1]].grad.data_ptr() - params[b[i]].grad.data_ptr()
            == params[b[i]].grad.numel() * params[b[i]].grad.element_size()
            for b in ddp.bucket_indices()
            for i in range(len(b) - 1)
        ]
    return initial, params_of(model)


def train_single(initial, dtype, opt_name, global_batch, steps, seed):
    model = digits_mlp().to(getattr(gt, dtype))
    model.load_state_dict({n: gt.from_numpy(a.copy()) for n, a in initial.items()})
    opt = make_optimizer(opt_name, model.parameters())
    for idx in batches(global_batch, steps, seed):
        x, y = xy(idx, dtype)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return params_of(model)


def save(prefix, params):
    for n, a in params.items():
        arrays[f"{prefix}/{n}"] = a


# -- parity: DDP on world ranks == one process on the global batch ------------------------
GLOBAL_BATCH = 48
for dtype in ("float32", "float64"):
    for opt_name in ("sgd_momentum", "adam"):
        case = f"parity/{opt_name}/{dtype}"
        initial, final = train_ddp(dtype, opt_name, GLOBAL_BATCH, STEPS, seed=7)
        save(f"{case}/initial", initial)
        save(f"{case}/ddp", final)
        if rank == 0:
            save(f"{case}/single", train_single(initial, dtype, opt_name, GLOBAL_BATCH, STEPS, 7))

case = "parity_view/sgd_momentum/float64"
initial, final = train_ddp("float64", "sgd_momentum", GLOBAL_BATCH, STEPS, seed=7, view=True)
save(f"{case}/ddp", final)
if rank == 0:
    save(f"{case}/single", train_single(initial, "float64", "sgd_momentum", GLOBAL_BATCH, STEPS, 7))

# -- no_sync: K micro-batches accumulated == one batch of K x the size --------------------
K, MICRO, NS_STEPS = 3, 8, 20
gt.manual_seed(5)
model = digits_mlp().double()
ddp = dist.DistributedDataParallel(model)
initial = params_of(model)
opt = optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
big = K * MICRO * world
for idx in batches(big, NS_STEPS, seed=11):
    opt.zero_grad()
    mine = idx.reshape(K, world, MICRO)[:, rank]  # micro-batch k of this rank
    with ddp.no_sync():
        for k in range(K - 1):
            x, y = xy(mine[k], "float64")
            (F.cross_entropy(ddp(x), y) / K).backward()
    x, y = xy(mine[K - 1], "float64")
    (F.cross_entropy(ddp(x), y) / K).backward()
    opt.step()
save("no_sync/ddp", params_of(model))
if rank == 0:
    save("no_sync/single", train_single(initial, "float64", "sgd_momentum", big, NS_STEPS, 11))


# -- unused parameters -----------------------------------------------------------------
class Branchy(nn.Module):
    def __init__(self, extra: bool):
        super().__init__()
        self.body = nn.Linear(64, 32)
        self.never = nn.Linear(32, 10)  # takes part in no forward
        self.head = nn.Linear(32, 10)
        self.rank0_only = nn.Linear(32, 10)  # used on rank 0 only
        self.extra = extra

    def forward(self, x):
        h = F.relu(self.body(x))
        out = self.head(h)
        return out + self.rank0_only(h) if self.extra else out


gt.manual_seed(9)
model = Branchy(extra=rank == 0).double()
ddp = dist.DistributedDataParallel(model, find_unused_parameters=True, bucket_cap_mb=0.01)
plain = Branchy(extra=rank == 0).double()
plain.load_state_dict(model.state_dict())
x, y = xy(np.arange(rank * 10, rank * 10 + 10), "float64")
F.cross_entropy(ddp(x), y).backward()
F.cross_entropy(plain(x), y).backward()
for n, p in plain.named_parameters():
    local = p.grad.detach().clone() if p.grad is not None else gt.zeros(p.shape, dtype=gt.float64)
    gathered = [gt.zeros(p.shape, dtype=gt.float64) for _ in range(world)]
    dist.all_gather(gathered, local)
    arrays[f"unused/local/{n}"] = np.stack([g.numpy() for g in gathered])
    got = dict(model.named_parameters())[n].grad
    facts[f"unused/grad_is_none/{n}"] = got is None
    if got is not None:
        arrays[f"unused/ddp/{n}"] = got.detach().numpy().copy()
opt = optim.SGD(ddp.parameters(), lr=0.1)
opt.step()
for step in range(5):  # keeps training, replicas stay equal
    opt.zero_grad()
    x, y = xy(np.arange(step * 20 + rank * 10, step * 20 + rank * 10 + 10), "float64")
    F.cross_entropy(ddp(x), y).backward()
    opt.step()
save("unused/after", params_of(model))

# without find_unused_parameters: torch's error at the next forward, on every rank
gt.manual_seed(9)
model = Branchy(extra=False).double()
ddp = dist.DistributedDataParallel(model)
x, y = xy(np.arange(10), "float64")
F.cross_entropy(ddp(x), y).backward()
try:
    ddp(x)
except RuntimeError as exc:
    facts["unused/error"] = str(exc)
else:
    facts["unused/error"] = None


# -- buckets: rebuilt in the order gradients become ready; launched during backward ------
class Swapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.second = nn.Linear(16, 4)  # registered first, used last
        self.first = nn.Linear(8, 16)

    def forward(self, x):
        return self.second(F.relu(self.first(x)))


gt.manual_seed(3)
model = Swapped()
launched_at_last_grad = []
ddp_ref = []
model.first.weight.register_post_accumulate_grad_hook(  # runs before DDP's hook on it
    lambda p: launched_at_last_grad.append(ddp_ref[0].reducer.next_bucket)
)
ddp = dist.DistributedDataParallel(model, bucket_cap_mb=1e-5)  # one parameter per bucket
ddp_ref.append(ddp)
facts["buckets/initial"] = ddp.bucket_indices()
for _ in range(2):
    ddp(gt.randn(5, 8)).sum().backward()
facts["buckets/rebuilt"] = ddp.bucket_indices()
facts["buckets/launched_before_last_grad"] = launched_at_last_grad
facts["buckets/names"] = [n for n, _ in model.named_parameters()]

# -- a different model on one rank: every rank raises -------------------------------------
try:
    dist.DistributedDataParallel(nn.Linear(4, 3 if rank == 0 else 2))
except RuntimeError as exc:
    facts["mismatch/error"] = str(exc)
else:
    facts["mismatch/error"] = None

dist.destroy_process_group()
OUT.mkdir(parents=True, exist_ok=True)
np.savez(OUT / f"rank{rank}.npz", **arrays)
(OUT / f"rank{rank}.json").write_text(json.dumps(facts))
