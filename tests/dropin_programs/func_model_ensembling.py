# A short torch program written for gradstack's drop-in tests (issue 35), after the
# torch.func "Model ensembling" tutorial (pytorch/tutorials, intermediate_source/
# ensembling.py): several models' parameters stacked with stack_module_state, a
# 'meta' copy of one model as the stateless base, functional_call under vmap, then the
# ensemble trained with torch.func.grad over the stacked parameters.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


num_models = 4
minibatches = torch.randn(num_models, 6, 3, 4)
targets = torch.randint(0, 3, (num_models, 6))
models = [SimpleMLP() for _ in range(num_models)]

minibatch = minibatches[0]
predictions1 = [model(minibatch) for model in models]
params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()})

base_model = copy.deepcopy(models[0])
base_model = base_model.to("meta")
print("base on", base_model.fc1.weight.device, base_model.fc1.weight.shape)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


predictions1_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print("same minibatch:", torch.allclose(predictions1_vmap, torch.stack(predictions1), atol=1e-6))
predictions2_vmap = vmap(fmodel)(params, buffers, minibatches)
predictions2 = [model(mb) for model, mb in zip(models, minibatches)]
print("own minibatches:", torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-6))
print(predictions2_vmap[:, 0])


def loss_fn(params, buffers, x, t):
    return F.cross_entropy(fmodel(params, buffers, x), t)


params = {k: v.detach() for k, v in params.items()}
for step in range(5):
    losses = vmap(loss_fn)(params, buffers, minibatches, targets)
    grads = vmap(grad(loss_fn))(params, buffers, minibatches, targets)
    params = {k: p - 0.5 * grads[k] for k, p in params.items()}
    print(step, losses)
print("grad norms:", {k: g.norm().item() for k, g in grads.items()})
