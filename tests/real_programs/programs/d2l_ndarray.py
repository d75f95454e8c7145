# Source: d2l-ai/d2l-en, chapter_preliminaries/ndarray.md (Dive into Deep Learning)
# Commit: 23d7a5aecceee57d1292c56e90cce307f183bb0a
# License: modified MIT for the book's sample code (LICENSE-SAMPLECODE of
# https://github.com/d2l-ai/d2l-en; the prose is CC BY-SA 4.0, not copied here)
# notebook: chapter_preliminaries/ndarray.md
# Changed from the chapter: its `pytorch` (and `all`) tab code blocks are below in order,
# one `# %%` cell each, as d2lbook builds the chapter's notebook; the first block
# (`%load_ext d2lbook.tab`, `tab.interact_select(...)`, d2lbook's tab machinery) and the
# `%%tab pytorch` line of each block are left out.
# mask: id\(Z\): \d+|<class 'torch(?:_tensor\._tensor)?\.Tensor'>
# Why masked: the section on saving memory prints `id(Z)` (an address, different in
# every run of either library); and `type(B)` of a tensor prints <class 'torch.Tensor'>
# where gradstack's Tensor class is gradstack_tensor._tensor.Tensor (a
# compiled extension type, whose module name is fixed when it is built).
# The text below this header is the chapter's code as written (tests/real_programs/README.md).
# %%
import torch

# %%
x = torch.arange(12, dtype=torch.float32)
x

# %%
x.numel()

# %%
x.shape

# %%
X = x.reshape(3, 4)
X

# %%
torch.zeros((2, 3, 4))

# %%
torch.ones((2, 3, 4))

# %%
torch.randn(3, 4)

# %%
torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])

# %%
X[-1], X[1:3]

# %%
X[1, 2] = 17
X

# %%
X[:2, :] = 12
X

# %%
torch.exp(x)

# %%
x = torch.tensor([1.0, 2, 4, 8])
y = torch.tensor([2, 2, 2, 2])
x + y, x - y, x * y, x / y, x ** y

# %%
X = torch.arange(12, dtype=torch.float32).reshape((3,4))
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1)

# %%
X == Y

# %%
X.sum()

# %%
a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
a, b

# %%
a + b

# %%
before = id(Y)
Y = Y + X
id(Y) == before

# %%
Z = torch.zeros_like(Y)
print('id(Z):', id(Z))
Z[:] = X + Y
print('id(Z):', id(Z))

# %%
before = id(X)
X += Y
id(X) == before

# %%
A = X.numpy()
B = torch.from_numpy(A)
type(A), type(B)

# %%
a = torch.tensor([3.5])
a, a.item(), float(a), int(a)
