# A short torch program written for gradstack's drop-in tests (issue 35): REINFORCE on a
# contextual bandit, the policy a torch.distributions.Categorical over a network's logits
# (sample, log_prob, entropy bonus), a moving-average baseline; then OneHotCategorical,
# a hard Gumbel-softmax and the categorical's KL.
import torch
import torch.distributions as D
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_ctx, n_arms = 4, 3
payoff = torch.tensor([[1.0, 0.0, 0.2], [0.0, 1.0, 0.1], [0.3, 0.2, 1.0], [0.0, 0.6, 0.0]])
policy = nn.Sequential(nn.Linear(n_ctx, 16), nn.Tanh(), nn.Linear(16, n_arms))
opt = torch.optim.Adam(policy.parameters(), lr=0.05)
baseline = 0.0
for it in range(60):
    ctx = torch.randint(0, n_ctx, (32,))
    dist = D.Categorical(logits=policy(F.one_hot(ctx, n_ctx).float()))
    actions = dist.sample()
    reward = payoff[ctx, actions] + 0.1 * torch.randn(32)
    advantage = reward - baseline
    loss = -(dist.log_prob(actions) * advantage).mean() - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    baseline = 0.9 * baseline + 0.1 * reward.mean().item()
    if it % 15 == 0:
        h = dist.entropy().mean().item()
        print(f"iter {it:2d} reward {reward.mean().item():.4f} entropy {h:.4f}")

with torch.no_grad():
    probs = policy(torch.eye(n_ctx)).softmax(-1)
print("greedy arms:", probs.argmax(1), "best arms:", payoff.argmax(1))
print("policy probs:", probs)
cat = D.Categorical(probs=probs)
print(
    "batch shape:",
    cat.batch_shape,
    "support:",
    cat.support,
    "enumerate:",
    cat.enumerate_support().shape,
)
print("KL to uniform:", D.kl_divergence(cat, D.Categorical(logits=torch.zeros(n_ctx, n_arms))))
onehot = D.OneHotCategorical(probs=probs)
s = onehot.sample((2,))
print("one-hot sample:", s.shape, s.sum(-1), onehot.log_prob(s).shape)
print("mode:", cat.mode, "mean one-hot:", onehot.mean[0])
g = F.gumbel_softmax(torch.log(probs), tau=0.5, hard=True)
print("gumbel hard rows:", g.sum(1), g.dtype)
