# Source: d2l-ai/d2l-en, chapter_builders-guide/read-write.md (Dive into Deep Learning)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# License: modified MIT for the book's sample code (LICENSE-SAMPLECODE of
# https://github.com/d2l-ai/d2l-en; the prose is CC BY-SA 4.0, not copied here)
# notebook: chapter_builders-guide/read-write.md
# Changed from the chapter: its `pytorch` (and `all`) tab code blocks are below in order,
# one `# %%` cell each, as d2lbook builds the chapter's notebook; the first block
# (`%load_ext d2lbook.tab`, `tab.interact_select(...)`, d2lbook's tab machinery) and the
# `%%tab pytorch` line of each block are left out.
# The text below this header is the chapter's code as written (tests/real_programs/README.md).
# %%
import torch
from torch import nn
from torch.nn import functional as F

# %%
x = torch.arange(4)
torch.save(x, 'x-file')

# %%
x2 = torch.load('x-file')
x2

# %%
y = torch.zeros(4)
torch.save([x, y],'x-files')
x2, y2 = torch.load('x-files')
(x2, y2)

# %%
mydict = {'x': x, 'y': y}
torch.save(mydict, 'mydict')
mydict2 = torch.load('mydict')
mydict2

# %%
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.output = nn.LazyLinear(10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))

net = MLP()
X = torch.randn(size=(2, 20))
Y = net(X)

# %%
torch.save(net.state_dict(), 'mlp.params')

# %%
clone = MLP()
clone.load_state_dict(torch.load('mlp.params'))
clone.eval()

# %%
Y_clone = clone(X)
Y_clone == Y
