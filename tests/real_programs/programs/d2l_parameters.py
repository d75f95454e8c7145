# Source: d2l-ai/d2l-en, chapter_builders-guide/parameters.md (Dive into Deep Learning)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# License: modified MIT for the book's sample code (LICENSE-SAMPLECODE of
# https://github.com/d2l-ai/d2l-en; the prose is CC BY-SA 4.0, not copied here)
# notebook: chapter_builders-guide/parameters.md
# Changed from the chapter: its `pytorch` (and `all`) tab code blocks are below in order,
# one `# %%` cell each, as d2lbook builds the chapter's notebook; the first block
# (`%load_ext d2lbook.tab`, `tab.interact_select(...)`, d2lbook's tab machinery) and the
# `%%tab pytorch` line of each block are left out.
# mask: <class 'torch(?:_nn)?\.(?:nn\.)?parameter\.Parameter'>
# Why masked: `type(net[2].bias)` prints torch.nn.parameter.Parameter; gradstack's class
# is nn-mini's gradstack_nn.parameter.Parameter (the facade re-exports it).
# The text below this header is the chapter's code as written (tests/real_programs/README.md).
# %%
import torch
from torch import nn

# %%
net = nn.Sequential(nn.LazyLinear(8),
                    nn.ReLU(),
                    nn.LazyLinear(1))

X = torch.rand(size=(2, 4))
net(X).shape

# %%
net[2].state_dict()

# %%
type(net[2].bias), net[2].bias.data

# %%
net[2].weight.grad == None

# %%
[(name, param.shape) for name, param in net.named_parameters()]

# %%
# We need to give the shared layer a name so that we can refer to its
# parameters
shared = nn.LazyLinear(8)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(),
                    shared, nn.ReLU(),
                    shared, nn.ReLU(),
                    nn.LazyLinear(1))

net(X)
# Check whether the parameters are the same
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
# Make sure that they are actually the same object rather than just having the
# same value
print(net[2].weight.data[0] == net[4].weight.data[0])
