# A short torch program written for gradstack's drop-in tests (issue 35): flex_attention
# with an ALiBi-style score_mod, a sliding-window causal block mask and GQA (torch runs its
# unfused CPU reference, forward only: torch has no CPU backward for it), the shift
# operators, and conjugate views written through.
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import and_masks, create_block_mask, flex_attention

B, H, KV_H, L, E = 2, 4, 2, 16, 8
q = torch.randn(B, H, L, E)
k = torch.randn(B, KV_H, L, E)
v = torch.randn(B, KV_H, L, E)


def alibi(score, b, h, q_idx, kv_idx):  # (slopes 1/2, 1/4, ... by head)
    return score - 0.5 ** (h + 1) * (q_idx - kv_idx)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < 6


mask = create_block_mask(and_masks(causal, window), None, None, L, L, device="cpu", BLOCK_SIZE=4)
print("blocks kept per query block:", mask.kv_num_blocks.tolist())
print("full blocks:", mask.full_kv_num_blocks.tolist())
print("sparsity:", round(mask.sparsity(), 2))
out = flex_attention(q, k, v, score_mod=alibi, block_mask=mask, enable_gqa=True)
print("output sum:", round(out.sum().item(), 4), "abs mean:", round(out.abs().mean().item(), 5))
plain = flex_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1))
sdpa = F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1))
print("no mods equals sdpa:", torch.allclose(plain, sdpa, atol=1e-5))

# shifts
x = torch.tensor([1, -8, 100, 7], dtype=torch.int16)
print(x << 3, x >> 2, x << torch.tensor([0, 1, 15, 16], dtype=torch.int16))
print(torch.bitwise_right_shift(x, torch.tensor([1, 40, -1, 2])), 1 << torch.arange(5))
y = torch.tensor([3, 5], dtype=torch.uint8)
y <<= 6
print(y)

# conjugate views
z = torch.tensor([1 + 2j, 3 - 1j])
c = z.conj()
print(c.is_conj(), c.imag.is_neg(), c.resolve_conj())
c[0] = 5 + 5j
print(z, c.imag)
