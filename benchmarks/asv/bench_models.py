"""The models people train (issue 34): one full training step of each model of
``benchmarks/model_zoo.py``, gradstack alone, in a quick configuration.

The same model code as ``benchmarks/models_vs_torch.py`` (which compares the steps with
torch's), run through the ``gradstack`` facade on a quarter of each model's batch (at
least 2), one thread, and without scipy (asv's environments do not install it: a plain
install, as users have it).  ``setup`` builds the model and its optimiser and runs one
warm-up step; the timed call is one full step (zero_grad, forward, loss, backward, clip,
optimizer step) and ``number = 1`` (Note [Fresh state per timed call] in _common.py).
``peakmem_`` gives the process's peak memory over the same step.
"""

from __future__ import annotations

from ._common import benchmark_script, one_thread, optional, require, rng

rounds = 1  # see Note [One round] in _common.py

gradstack = optional("gradstack")
MODEL_NAMES = [
    "char_gpt",
    "lstm_lm",
    "lenet5",
    "resnet",
    "gru_seq2seq",
    "mlp_bn",
    "text_bag",
    "vae",
    "mingpt",
]


class ModelStep:
    """One training step of each model (quick configuration)."""

    params = [MODEL_NAMES]
    param_names = ["model"]
    number = 1
    timeout = 600

    def setup(self, model):
        require(gradstack, attrs=((gradstack, "nn"), (gradstack, "optim")))
        one_thread()
        self.zoo = benchmark_script("model_zoo")
        spec = self.zoo.MODELS[model]
        gradstack.manual_seed(0)
        self.task = spec.build(gradstack)
        self.batches = [
            self.zoo.to_tensors(gradstack, spec.batch(rng(i), quick=True)) for i in range(2)
        ]
        self.zoo.train_step(gradstack, self.task, self.batches[0])

    def time_train_step(self, model):
        self.zoo.train_step(gradstack, self.task, self.batches[1])

    def peakmem_train_step(self, model):
        self.zoo.train_step(gradstack, self.task, self.batches[1])
