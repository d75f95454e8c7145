"""nn-mini: the tutorial's TinyModel and an MNIST-sized MLP, with forward, backward and the
optimiser step timed separately, the whole training step, and its peak memory."""

from __future__ import annotations

import numpy as np

from ._common import one_thread, optional, require, rng, tensor

rounds = 1  # see Note [One round] in _common.py

gt = optional("gradstack_tensor")
ag = optional("gradstack_autograd")
nn = optional("gradstack_nn")
optim = (getattr(nn, "optim", None) or optional("gradstack_nn.optim")) if nn is not None else None


def _tiny_model():
    class TinyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Linear(1000, 100)
            self.relu = nn.ReLU()
            self.layer2 = nn.Linear(100, 10)

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    return TinyModel()


def _mlp():
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )


def _cross_entropy():
    if hasattr(nn, "CrossEntropyLoss"):
        return nn.CrossEntropyLoss()

    def loss(logits, target_onehot):  # the same mean cross-entropy, spelled with tensor ops
        return -(logits.log_softmax(dim=1) * target_onehot).sum() / logits.shape[0]

    return loss


class _Setup:
    """Shared setup: model, SGD, inputs, and ``loss`` recorded (ready for backward)."""

    number = 1

    def _build(self):
        raise NotImplementedError

    def setup(self):
        require(gt, ag, nn, optim, attrs=((nn, "Linear"), (nn, "Module"), (optim, "SGD")))
        one_thread()
        gt.manual_seed(0)
        self.model, self.inputs, self.target, self.criterion = self._build()
        self.opt = optim.SGD(self.model.parameters(), lr=1e-3)
        self.loss = self.criterion(self.model(self.inputs), self.target)


class _Step(_Setup):
    """Forward (model and loss), backward, and the whole training step."""

    def time_forward(self):
        self.criterion(self.model(self.inputs), self.target)

    def time_backward(self):
        self.loss.backward()

    def time_train_step(self):
        self.opt.zero_grad()
        loss = self.criterion(self.model(self.inputs), self.target)
        loss.backward()
        self.opt.step()

    def peakmem_train_step(self):
        self.loss = None  # measure the step, not the graph setup recorded
        self.time_train_step()


class _OptimizerStep(_Setup):
    """The optimiser's update alone: setup runs forward and backward, the timed call
    ``opt.step()``."""

    def setup(self):
        _Setup.setup(self)
        self.loss.backward()

    def time_step(self):
        self.opt.step()


def _tiny_model_inputs():
    r = rng()
    x = tensor(r.standard_normal((16, 1000)).astype(np.float32))
    ideal = tensor(r.standard_normal((16, 10)).astype(np.float32))
    return _tiny_model(), x, ideal, lambda pred, ideal: (ideal - pred).pow(2).sum()


def _mlp_inputs():
    r = rng()
    x = tensor(r.standard_normal((256, 784)).astype(np.float32))
    labels = r.integers(0, 10, 256)
    criterion = _cross_entropy()
    if hasattr(nn, "CrossEntropyLoss"):
        target = gt.tensor(labels)
    else:
        target = tensor(np.eye(10, dtype=np.float32)[labels])
    return _mlp(), x, target, criterion


class TinyModelStep(_Step):
    """The tutorial's model: batch 16, 1000-100-10, loss ``(ideal - pred).pow(2).sum()``."""

    _build = staticmethod(_tiny_model_inputs)


class TinyModelOptimizerStep(_OptimizerStep):
    _build = staticmethod(_tiny_model_inputs)


class MLPStep(_Step):
    """784-512-512-10 with ReLU, batch 256, cross-entropy (nn.CrossEntropyLoss when the
    commit has it)."""

    _build = staticmethod(_mlp_inputs)


class MLPOptimizerStep(_OptimizerStep):
    _build = staticmethod(_mlp_inputs)
