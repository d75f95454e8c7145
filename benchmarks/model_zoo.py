"""The models of issue 34, written once against a torch-shaped library.

Every builder takes the library as its first argument, ``torch`` itself or ``gradstack``
(``import gradstack as torch``), and runs the same code on either: the same modules, the
same functional calls, the same optimiser and the same training step.  Nothing here
imports a library; ``benchmarks/models_vs_torch.py`` times the models side by side,
``benchmarks/model_gemm_split.py`` splits their steps into GEMM time and the rest, and
``benchmarks/asv/bench_models.py`` tracks gradstack's steps over commits.

A model is a :class:`ModelSpec`: ``build(torch, dropout=True)`` returns a :class:`Task`
(the model, its optimiser, the loss of one batch, the gradient-norm clip) and
``batch(rng)`` makes one batch of inputs as numpy arrays, so that both libraries train on
the same numbers.  :func:`train_step` is the full step every model runs: ``zero_grad``,
forward, loss, ``backward``, ``clip_grad_norm_`` where the model clips, ``optimizer.step``.

The models (float32, CPU):

========================  ===============================================================
``char_gpt``              character GPT: 4 pre-norm blocks, d=128, 4 heads, context 64,
                          batch 16, exact-GELU MLP, AdamW, ``clip_grad_norm_(1.0)``
``lstm_lm``               LSTM language model: Embedding(1000, 128), LSTM(128, 256),
                          Linear(256, 1000), batch 20 x 30 steps, Adam, clip 0.25
``lenet5``                LeNet-5: conv 5x5 (1->6, pad 2), max_pool, conv 5x5 (6->16),
                          max_pool, 3 Linear, batch 64 of 28x28, SGD with momentum
``resnet``                a CIFAR ResNet with BatchNorm2d (stem + one basic block per
                          stage, widths 16/32/64), batch 32 of 3x32x32, SGD + momentum
``gru_seq2seq``           GRU encoder-decoder with Bahdanau attention (PyTorch's
                          translation tutorial: one decoder step at a time, teacher
                          forcing), hidden 128, vocabularies 1000, length 10, batch 32
``mlp_bn``                MLP 784-512-256-10 with BatchNorm1d and Dropout(0.2), batch 128,
                          Adam
``text_bag``              EmbeddingBag text classifier (torchtext's tutorial model):
                          EmbeddingBag(20000, 64, mean) + Linear(64, 4), 64 texts of
                          20-80 tokens, SGD lr 5, clip 0.1
``vae``                   VAE 784-400-20 (PyTorch's example): reparameterisation, BCE +
                          KL, batch 128, Adam
``mingpt``                minGPT's GPT at ``gpt-mini`` (6 layers, 6 heads, 192 dims),
                          vocabulary 65, context 128, batch 4, dropout 0.1, tanh GELU,
                          its AdamW groups (decay / no decay), clip 1.0
========================  ===============================================================

Examples
--------
>>> import numpy as np
>>> import gradstack as torch
>>> spec = MODELS["lenet5"]
>>> task = spec.build(torch)
>>> batch = to_tensors(torch, spec.batch(np.random.default_rng(0)))
>>> loss = train_step(torch, task, batch)
>>> tuple(loss.shape), bool(loss.item() > 0)
((), True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MODELS", "ModelSpec", "Task", "to_tensors", "train_step", "state_arrays"]


@dataclass
class Task:
    """One model ready to train: ``loss(*batch)`` runs the forward pass and the loss."""

    model: Any
    optimizer: Any
    loss: Callable[..., Any]
    clip: float | None = None


@dataclass(frozen=True)
class ModelSpec:
    """A model of the benchmark: its builder and its batches."""

    name: str
    title: str
    build: Callable[..., Task]  # build(torch, dropout=True) -> Task
    make_batch: Callable[[np.random.Generator, int], tuple]  # (rng, batch size) -> arrays
    batch_size: int
    random: bool = False  # the step draws random numbers (dropout, the VAE's noise)

    def batch(self, rng: np.random.Generator, quick: bool = False) -> tuple:
        """One batch as numpy arrays; ``quick``: a quarter of the batch (at least 2), the
        asv suite's quick configuration."""
        size = max(2, self.batch_size // 4) if quick else self.batch_size
        return self.make_batch(rng, size)


def train_step(torch, task: Task, batch: tuple):
    """The full training step: zero_grad, forward and loss, backward, clip, step."""
    task.optimizer.zero_grad()
    loss = task.loss(*batch)
    loss.backward()
    if task.clip is not None:
        torch.nn.utils.clip_grad_norm_(task.model.parameters(), task.clip)
    task.optimizer.step()
    return loss


def to_tensors(torch, arrays: tuple) -> tuple:
    """The library's tensors holding copies of a batch's numpy arrays."""
    return tuple(torch.from_numpy(np.array(a, copy=True)) for a in arrays)


def state_arrays(model) -> dict[str, np.ndarray]:
    """A model's ``state_dict`` as numpy arrays (to copy weights between libraries)."""
    return {k: np.array(v.detach().numpy(), copy=True) for k, v in model.state_dict().items()}


def _p(dropout: bool, p: float) -> float:
    return p if dropout else 0.0


# ======================================================================= character GPT


def char_gpt(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional
    vocab, context, n_layer, n_head, d = 65, 64, 4, 4, 128

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            mask = torch.tril(torch.ones(context, context)).view(1, 1, context, context)
            self.register_buffer("mask", mask)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // n_head))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = SelfAttention()
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class CharGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(context, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(T))
            return self.head(self.ln_f(self.blocks(x)))

    model = CharGPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def loss(idx, targets):
        logits = model(idx)
        return F.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    return Task(model, opt, loss, clip=1.0)


def _char_batch(rng, batch, vocab=65, context=64):
    text = rng.integers(0, vocab, size=(batch, context + 1))
    return text[:, :-1].copy(), text[:, 1:].copy()


# ======================================================================= LSTM language model


def lstm_lm(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 128)
            self.lstm = nn.LSTM(128, 256)
            self.decoder = nn.Linear(256, 1000)

        def forward(self, tokens):  # (steps, batch)
            out, _ = self.lstm(self.embed(tokens))
            return self.decoder(out)

    model = LSTMLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss(tokens, targets):
        return F.cross_entropy(model(tokens).view(-1, 1000), targets.view(-1))

    return Task(model, opt, loss, clip=0.25)


def _lstm_batch(rng, batch):
    text = rng.integers(0, 1000, size=(31, batch))
    return text[:-1].copy(), text[1:].copy()


# ======================================================================= LeNet-5


def lenet5(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120),
        nn.ReLU(),
        nn.Linear(120, 84),
        nn.ReLU(),
        nn.Linear(84, 10),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss(images, labels):
        return F.cross_entropy(model(images), labels)

    return Task(model, opt, loss)


def _image_batch(rng, batch, shape, classes=10):
    images = rng.standard_normal((batch, *shape)).astype(np.float32)
    return images, rng.integers(0, classes, size=batch)


# ======================================================================= ResNet


def resnet(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self, widths=(16, 32, 64), classes=10):
            super().__init__()
            self.conv = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(widths[0])
            blocks, cin = [], widths[0]
            for i, w in enumerate(widths):
                blocks.append(BasicBlock(cin, w, 1 if i == 0 else 2))
                cin = w
            self.layers = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            x = F.relu(self.bn(self.conv(x)))
            x = self.pool(self.layers(x))
            return self.fc(torch.flatten(x, 1))

    model = ResNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)

    def loss(images, labels):
        return F.cross_entropy(model(images), labels)

    return Task(model, opt, loss)


# ======================================================================= GRU seq2seq


def gru_seq2seq(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional
    hidden, src_vocab, tgt_vocab = 128, 1000, 1000
    p = _p(dropout, 0.1)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(src_vocab, hidden)
            self.gru = nn.GRU(hidden, hidden, batch_first=True)
            self.dropout = nn.Dropout(p)

        def forward(self, src):
            return self.gru(self.dropout(self.embedding(src)))

    class BahdanauAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.Wa = nn.Linear(hidden, hidden)
            self.Ua = nn.Linear(hidden, hidden)
            self.Va = nn.Linear(hidden, 1)

        def forward(self, query, keys):  # (B, 1, H), (B, S, H)
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)
            return torch.bmm(weights, keys)

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(tgt_vocab, hidden)
            self.attention = BahdanauAttention()
            self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
            self.out = nn.Linear(hidden, tgt_vocab)
            self.dropout = nn.Dropout(p)

        def forward(self, enc_out, enc_hidden, dec_in):  # teacher forcing
            h = enc_hidden
            outputs = []
            for i in range(dec_in.shape[1]):
                emb = self.dropout(self.embedding(dec_in[:, i : i + 1]))
                context = self.attention(h.permute(1, 0, 2), enc_out)
                out, h = self.gru(torch.cat((emb, context), dim=2), h)
                outputs.append(self.out(out))
            return F.log_softmax(torch.cat(outputs, dim=1), dim=-1)

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.decoder = Decoder()

        def forward(self, src, dec_in):
            enc_out, enc_hidden = self.encoder(src)
            return self.decoder(enc_out, enc_hidden, dec_in)

    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss(src, dec_in, target):
        logp = model(src, dec_in)
        return F.nll_loss(logp.view(-1, tgt_vocab), target.view(-1))

    return Task(model, opt, loss)


def _seq2seq_batch(rng, batch, length=10):
    src = rng.integers(2, 1000, size=(batch, length))
    target = rng.integers(2, 1000, size=(batch, length))
    dec_in = np.concatenate([np.zeros((batch, 1), np.int64), target[:, :-1]], axis=1)  # SOS=0
    return src, dec_in, target


# ======================================================================= MLP + BatchNorm1d


def mlp_bn(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional
    p = _p(dropout, 0.2)
    model = nn.Sequential(
        nn.Linear(784, 512),
        nn.BatchNorm1d(512),
        nn.ReLU(),
        nn.Dropout(p),
        nn.Linear(512, 256),
        nn.BatchNorm1d(256),
        nn.ReLU(),
        nn.Dropout(p),
        nn.Linear(256, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss(x, labels):
        return F.cross_entropy(model(x), labels)

    return Task(model, opt, loss)


# ======================================================================= EmbeddingBag classifier


def text_bag(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional

    class TextClassifier(nn.Module):
        def __init__(self, vocab=20000, dim=64, classes=4):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab, dim)
            self.fc = nn.Linear(dim, classes)
            self.embedding.weight.data.uniform_(-0.5, 0.5)
            self.fc.weight.data.uniform_(-0.5, 0.5)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    model = TextClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=5.0)

    def loss(text, offsets, labels):
        return F.cross_entropy(model(text, offsets), labels)

    return Task(model, opt, loss, clip=0.1)


def _text_batch(rng, texts):
    lengths = rng.integers(20, 81, size=texts)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    text = rng.integers(0, 20000, size=int(lengths.sum()))
    return text, offsets, rng.integers(0, 4, size=texts)


# ======================================================================= VAE


def vae(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = torch.exp(0.5 * logvar)
            return mu + torch.randn_like(std) * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 784))
            return self.decode(self.reparameterize(mu, logvar)), mu, logvar

    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss(x):
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return bce + kld

    return Task(model, opt, loss)


def _vae_batch(rng, batch):
    return (rng.random((batch, 1, 28, 28), dtype=np.float32),)


# ======================================================================= minGPT, gpt-mini
# Written after minGPT's mingpt/model.py (its structure, names and initialisation), not
# copied from it: a tanh-approximation GELU module, batched heads with a causal-mask buffer,
# blocks holding their MLP in a ModuleDict, a weight-decay / no-decay split of the
# parameters for AdamW, and the cross-entropy with ignore_index=-1.


def mingpt(torch, dropout=True):
    nn, F = torch.nn, torch.nn.functional
    n_layer, n_head, n_embd = 6, 6, 192  # gpt-mini
    vocab_size, block_size = 65, 128
    pdrop = _p(dropout, 0.1)

    class NewGELU(nn.Module):
        def forward(self, x):
            inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
            return 0.5 * x * (1.0 + torch.tanh(inner))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.attn_dropout = nn.Dropout(pdrop)
            self.resid_dropout = nn.Dropout(pdrop)
            causal = torch.tril(torch.ones(block_size, block_size))
            self.register_buffer("bias", causal.view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            hs = C // n_head
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q = q.view(B, T, n_head, hs).transpose(1, 2)
            k = k.view(B, T, n_head, hs).transpose(1, 2)
            v = v.view(B, T, n_head, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict(
                dict(
                    c_fc=nn.Linear(n_embd, 4 * n_embd),
                    c_proj=nn.Linear(4 * n_embd, n_embd),
                    act=NewGELU(),
                    dropout=nn.Dropout(pdrop),
                )
            )

        def mlpf(self, x):
            m = self.mlp
            return m.dropout(m.c_proj(m.act(m.c_fc(x))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlpf(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(
                dict(
                    wte=nn.Embedding(vocab_size, n_embd),
                    wpe=nn.Embedding(block_size, n_embd),
                    drop=nn.Dropout(pdrop),
                    h=nn.ModuleList([Block() for _ in range(n_layer)]),
                    ln_f=nn.LayerNorm(n_embd),
                )
            )
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):  # GPT-2's scaled residual projections
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        @staticmethod
        def _init_weights(module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                torch.nn.init.zeros_(module.bias)
                torch.nn.init.ones_(module.weight)

        def configure_optimizers(self, lr=5e-4, weight_decay=0.1, betas=(0.9, 0.95)):
            decay, no_decay = set(), set()
            for mn, m in self.named_modules():
                for pn, _ in m.named_parameters(recurse=False):
                    full = f"{mn}.{pn}" if mn else pn
                    if pn.endswith("weight") and isinstance(m, nn.Linear):
                        decay.add(full)
                    else:  # biases, LayerNorm and Embedding weights
                        no_decay.add(full)
            params = dict(self.named_parameters())
            groups = [
                {"params": [params[n] for n in sorted(decay)], "weight_decay": weight_decay},
                {"params": [params[n] for n in sorted(no_decay)], "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(groups, lr=lr, betas=betas)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            tr = self.transformer
            x = tr.drop(tr.wte(idx) + tr.wpe(pos))
            for block in tr.h:
                x = block(x)
            logits = self.lm_head(tr.ln_f(x))
            loss = None
            if targets is not None:
                flat = logits.view(-1, logits.size(-1))
                loss = F.cross_entropy(flat, targets.view(-1), ignore_index=-1)
            return logits, loss

    model = GPT()

    def loss(idx, targets):
        return model(idx, targets)[1]

    return Task(model, model.configure_optimizers(), loss, clip=1.0)


# ======================================================================= the table

MODELS: dict[str, ModelSpec] = {
    s.name: s
    for s in (
        ModelSpec(
            "char_gpt",
            "character GPT (4 blocks, d=128, 4 heads, ctx 64, batch 16; AdamW, clip)",
            char_gpt,
            _char_batch,
            16,
        ),
        ModelSpec(
            "lstm_lm",
            "LSTM LM (Embedding(1000,128), LSTM(128,256), 30 x 20; Adam, clip)",
            lstm_lm,
            _lstm_batch,
            20,
        ),
        ModelSpec(
            "lenet5",
            "LeNet-5 (batch 64 of 1x28x28; SGD momentum)",
            lenet5,
            lambda rng, b: _image_batch(rng, b, (1, 28, 28)),
            64,
        ),
        ModelSpec(
            "resnet",
            "ResNet, BatchNorm2d (16/32/64, batch 32 of 3x32x32; SGD momentum)",
            resnet,
            lambda rng, b: _image_batch(rng, b, (3, 32, 32)),
            32,
        ),
        ModelSpec(
            "gru_seq2seq",
            "GRU seq2seq + attention (hidden 128, len 10, batch 32; Adam)",
            gru_seq2seq,
            _seq2seq_batch,
            32,
            random=True,
        ),
        ModelSpec(
            "mlp_bn",
            "MLP 784-512-256-10, BatchNorm1d + Dropout (batch 128; Adam)",
            mlp_bn,
            lambda rng, b: _image_batch(rng, b, (784,)),
            128,
            random=True,
        ),
        ModelSpec(
            "text_bag",
            "EmbeddingBag classifier (20000 x 64, 64 texts; SGD, clip)",
            text_bag,
            _text_batch,
            64,
        ),
        ModelSpec(
            "vae", "VAE 784-400-20 (batch 128; BCE + KL, Adam)", vae, _vae_batch, 128, random=True
        ),
        ModelSpec(
            "mingpt",
            "minGPT gpt-mini (6 layers, 6 heads, 192; ctx 128, batch 4; AdamW, clip)",
            mingpt,
            lambda rng, b: _char_batch(rng, b, 65, 128),
            4,
            random=True,
        ),
    )
}
