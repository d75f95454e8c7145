# A short torch program written for gradstack's drop-in tests (issue 35): a sequence
# classifier on variable-length sequences with nn.utils.rnn (pad_sequence,
# pack_padded_sequence, pad_packed_sequence, pack_sequence), a bidirectional LSTM and a
# GRU, trained a few steps; prints the packed batch sizes, shapes and losses.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
)

torch.manual_seed(0)
lengths = torch.tensor([7, 3, 5, 2, 6, 4])
seqs = [torch.randint(1, 20, (int(n),)) for n in lengths]
labels = torch.tensor([int(s.sum()) % 2 for s in seqs])
padded = pad_sequence(seqs, batch_first=True)
print("padded:", padded.shape, padded[1])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 12, batch_first=True, bidirectional=True)
        self.out = nn.Linear(24, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
        feats = torch.cat([h[-2], h[-1]], dim=1)
        return self.out(feats), unpacked, out_lengths, packed


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(15):
    logits, unpacked, out_lengths, packed = model(padded, lengths)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 5 == 0:
        print(f"step {step:2d} loss {loss.item():.5f}")
print("batch sizes:", packed.batch_sizes, "sorted:", packed.sorted_indices)
print(
    "unpacked:", unpacked.shape, out_lengths, "pad rows zero:", unpacked[3, 2:].abs().sum().item()
)
print("predictions:", logits.argmax(1), labels)

# a GRU over a packed list (sorted by length), and total_length
gru = nn.GRU(3, 4, num_layers=2)
feats = [torch.randn(int(n), 3) for n in sorted(lengths.tolist(), reverse=True)]
out, h = gru(pack_sequence(feats))
padded_out, lens = pad_packed_sequence(out, total_length=9)
print("gru:", padded_out.shape, lens, h.shape)
print("last steps:", torch.stack([padded_out[n - 1, i] for i, n in enumerate(lens)]).sum(1))
print(
    "h[-1] equals last steps:",
    torch.allclose(h[-1], torch.stack([padded_out[n - 1, i] for i, n in enumerate(lens)])),
)
