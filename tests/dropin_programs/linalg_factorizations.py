# A short torch program written for gradstack's drop-in tests (issue 35): torch.linalg's
# factorizations as real code uses them: a spectrum by linalg.eig, a least-squares fit by
# linalg.lstsq, Gram-Schmidt by torch.qr, a PSD projection by eigh, the pseudo-inverse, a
# triangular solve and LU, with gradients through them.  Only phase- and sign-free
# quantities of eigenvectors are printed (their phases are LAPACK's).
import torch

torch.manual_seed(0)
A = torch.randn(5, 5, dtype=torch.float64)
L, V = torch.linalg.eig(A)
order = torch.argsort(L.real * 1000 + L.imag)
print("eigenvalues:", [(round(z.real, 6), round(z.imag, 6)) for z in L[order].tolist()])
print("A V = V L:", torch.allclose(A.to(V.dtype) @ V, V * L, atol=1e-10))
print("spectral radius:", round(torch.linalg.eigvals(A).abs().max().item(), 6))

# least squares: a cubic through noisy points
x = torch.linspace(-1, 1, 40, dtype=torch.float64)
y = 1 - 2 * x + 0.5 * x**3 + 0.01 * torch.randn(40, dtype=torch.float64)
X = torch.stack([x**0, x, x**2, x**3], 1)
fit = torch.linalg.lstsq(X, y.unsqueeze(1))
print(
    "coefficients:",
    [round(c, 4) for c in fit.solution.squeeze(1).tolist()],
    "rank",
    fit.rank.item(),
)
print(torch.linalg.lstsq(X, y.unsqueeze(1), driver="gelsd").residuals)

# orthonormal basis (torch.qr) and its gradient
W = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
Q, R = torch.qr(W)
print("Q^T Q = I:", torch.allclose(Q.T @ Q, torch.eye(3, dtype=torch.float64)))
(R.diagonal().abs().log().sum()).backward()
print("d log|det R| / dW:", W.grad.sum().item())

# nearest PSD matrix by eigh, and eigvalsh's gradient
S = torch.randn(4, 4, dtype=torch.float64)
S = (S + S.T) / 2
w, U = torch.linalg.eigh(S)
psd = U @ torch.diag(w.clamp(min=0)) @ U.T
print("psd eigenvalues:", [round(v, 6) for v in torch.linalg.eigvalsh(psd).tolist()])
S.requires_grad_()
torch.linalg.eigvalsh(S).max().backward()
print("d lambda_max / dS trace:", round(S.grad.trace().item(), 6))

# pseudo-inverse, rank, condition number, triangular solve, LU
B = torch.randn(4, 6, dtype=torch.float64)
print("pinv:", torch.allclose(B @ torch.linalg.pinv(B) @ B, B), torch.linalg.matrix_rank(B).item())
print("cond:", round(torch.linalg.cond(B @ B.T).item(), 4))
T = torch.triu(torch.randn(3, 3, dtype=torch.float64)) + 3 * torch.eye(3, dtype=torch.float64)
print(torch.linalg.solve_triangular(T, torch.ones(3, 2, dtype=torch.float64), upper=True))
P, Lo, Up = torch.linalg.lu(A)
print("pivots:", torch.linalg.lu_factor(A).pivots.tolist(), torch.allclose(P @ Lo @ Up, A))
x = torch.linalg.lu_solve(*torch.linalg.lu_factor(A), torch.ones(5, 1, dtype=torch.float64))
print("lu_solve:", [round(v, 6) for v in x.squeeze(1).tolist()])
print(torch.linalg.eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])))
