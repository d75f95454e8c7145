# Source: d2l-ai/d2l-en, chapter_preliminaries/autograd.md (Dive into Deep Learning)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# License: modified MIT for the book's sample code (LICENSE-SAMPLECODE of
# https://github.com/d2l-ai/d2l-en; the prose is CC BY-SA 4.0, not copied here)
# notebook: chapter_preliminaries/autograd.md
# Changed from the chapter: its `pytorch` (and `all`) tab code blocks are below in order,
# one `# %%` cell each, as d2lbook builds the chapter's notebook; the first block
# (`%load_ext d2lbook.tab`, `tab.interact_select(...)`, d2lbook's tab machinery) and the
# `%%tab pytorch` line of each block are left out.
# The text below this header is the chapter's code as written (tests/real_programs/README.md).
# %%
import torch

# %%
x = torch.arange(4.0)
x

# %%
# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
x.grad  # The gradient is None by default

# %%
y = 2 * torch.dot(x, x)
y

# %%
y.backward()
x.grad

# %%
x.grad == 4 * x

# %%
x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
x.grad

# %%
x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
x.grad

# %%
x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
x.grad == u

# %%
x.grad.zero_()
y.sum().backward()
x.grad == 2 * x

# %%
def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

# %%
a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()

# %%
a.grad == d / a
