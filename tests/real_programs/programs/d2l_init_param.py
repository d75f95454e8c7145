# Source: d2l-ai/d2l-en, chapter_builders-guide/init-param.md (Dive into Deep Learning)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# License: modified MIT for the book's sample code (LICENSE-SAMPLECODE of
# https://github.com/d2l-ai/d2l-en; the prose is CC BY-SA 4.0, not copied here)
# notebook: chapter_builders-guide/init-param.md
# Changed from the chapter: its `pytorch` (and `all`) tab code blocks are below in order,
# one `# %%` cell each, as d2lbook builds the chapter's notebook; the first block
# (`%load_ext d2lbook.tab`, `tab.interact_select(...)`, d2lbook's tab machinery) and the
# `%%tab pytorch` line of each block are left out.
# The text below this header is the chapter's code as written (tests/real_programs/README.md).
# %%
import torch
from torch import nn

# %%
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
X = torch.rand(size=(2, 4))
net(X).shape

# %%
def init_normal(module):
    if type(module) == nn.Linear:
        nn.init.normal_(module.weight, mean=0, std=0.01)
        nn.init.zeros_(module.bias)

net.apply(init_normal)
net[0].weight.data[0], net[0].bias.data[0]

# %%
def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)

net.apply(init_constant)
net[0].weight.data[0], net[0].bias.data[0]

# %%
def init_xavier(module):
    if type(module) == nn.Linear:
        nn.init.xavier_uniform_(module.weight)

def init_42(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 42)

net[0].apply(init_xavier)
net[2].apply(init_42)
print(net[0].weight.data[0])
print(net[2].weight.data)

# %%
def my_init(module):
    if type(module) == nn.Linear:
        print("Init", *[(name, param.shape)
                        for name, param in module.named_parameters()][0])
        nn.init.uniform_(module.weight, -10, 10)
        module.weight.data *= module.weight.data.abs() >= 5

net.apply(my_init)
net[0].weight[:2]

# %%
net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
net[0].weight.data[0]
