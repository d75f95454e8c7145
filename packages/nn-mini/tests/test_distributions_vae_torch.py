"""A variational autoencoder trained as a torch program writes it, once under torch 2.13
and once under gradstack (nn-mini's namespace): ``Normal``/``Independent`` posteriors
with ``rsample``, a ``Bernoulli`` likelihood, ``kl_divergence`` to the prior, Adam.  The
same seed gives the same weights, the same reparameterisation noise, and so the same
losses and weights step after step."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

DATA = (np.random.default_rng(0).uniform(size=(64, 12)) > 0.6).astype(np.float32)


def train_vae(lib, steps=6, batch=16, latent=3):
    """The program, written once for ``lib`` (torch or gradstack's namespace)."""
    nn, D = lib.nn, lib.distributions
    lib.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 2 * latent))
            self.dec = nn.Sequential(nn.Linear(latent, 32), nn.Tanh(), nn.Linear(32, 12))

        def forward(self, x):
            mu, log_var = self.enc(x).chunk(2, dim=-1)
            posterior = D.Independent(D.Normal(mu, (0.5 * log_var).exp()), 1)
            prior = D.Independent(D.Normal(lib.zeros_like(mu), lib.ones_like(mu)), 1)
            z = posterior.rsample()
            likelihood = D.Independent(D.Bernoulli(logits=self.dec(z)), 1)
            elbo = likelihood.log_prob(x) - D.kl_divergence(posterior, prior)
            return -elbo.mean()

    model = VAE()
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    data = lib.tensor(DATA)
    losses = []
    for step in range(steps):
        x = data[(step * batch) % len(DATA) :][:batch]
        opt.zero_grad()
        loss = model(x)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # a few draws from the trained model's prior predictive, as a program would print
    with lib.no_grad():
        z = D.Normal(lib.zeros(4, latent), 1.0).sample()
        samples = D.Bernoulli(logits=model.dec(z)).probs
    weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return losses, weights, samples.numpy()


def test_vae_training_matches_torch():
    ours, theirs = train_vae(gs), train_vae(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    assert ours[0][-1] < ours[0][0]  # it learns
    assert ours[1].keys() == theirs[1].keys()
    for k in ours[1]:
        np.testing.assert_allclose(ours[1][k], theirs[1][k], rtol=1e-4, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-6)


def test_vae_gradients_at_the_first_step_match_torch():
    """The gradient of one ELBO through rsample and the KL, parameter by parameter."""
    grads = []
    for lib in (gs, torch):
        nn, D = lib.nn, lib.distributions
        lib.manual_seed(1)
        enc = nn.Linear(12, 4).double()
        dec = nn.Linear(2, 12).double()
        x = lib.tensor(DATA[:8], dtype=lib.float64)
        mu, log_var = enc(x).chunk(2, dim=-1)
        q = D.Normal(mu, (0.5 * log_var).exp())
        z = q.rsample((3,))  # three samples per example
        recon = D.Bernoulli(logits=dec(z)).log_prob(x).sum(-1).mean(0)
        kl = D.kl_divergence(q, D.Normal(0.0, 1.0)).sum(-1)
        loss = (kl - recon).mean()
        params = list(enc.parameters()) + list(dec.parameters())
        grads.append([g.numpy() for g in lib.autograd.grad(loss, params)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
