"""Data attribution, exactly: influence functions on a convex model, TracIn on saved checkpoints.

Influence functions and TracIn are defined for any differentiable model, but only on a convex one is the
inverse Hessian exact: here L2-regularised multinomial logistic regression, whose parameters W [(D+1), C]
(an intercept row last, regularised like the rest) are fitted by Newton's method to machine precision. On
it, an entry's influence matrix is compared with the definition, not with another approximation; LiSSA,
conjugate gradients, Arnoldi and (E)K-FAC are estimators of the same quantity.

* **Influence** (Koh & Liang 2017, "Understanding Black-box Predictions via Influence Functions", eq. 2):
  I_up,loss(z, z_test) = −∇_θ L(z_test, θ̂)ᵀ H_θ̂⁻¹ ∇_θ L(z, θ̂), with H the Hessian of the training
  objective, (1/n) Σ_i ∇²L(z_i, θ̂) + λI. Up-weighting z by ε changes the test loss by ε · I; removing it is
  ε = −1/n, so −I/n predicts the leave-one-out change of the test loss. A negative value is a helpful point.
  Some code drops the minus sign (scores "helpfulness"); that is a convention, stated, not charged.
* **Self-influence**, Koh & Liang's ranking for mislabelled points (their section 5.4): ∇L(z_i)ᵀ H⁻¹ ∇L(z_i),
  here given as that non-negative quadratic form (−I_up,loss(z_i, z_i)); high is suspect.
* **TracIn** (Pruthi, Liu, Kale, Sundararajan 2020, "Estimating Training Data Influence by Tracing Gradient
  Descent", TracInCP): TracIn(z, z′) = Σ_t η_t ∇ℓ(w_t, z) · ∇ℓ(w_t, z′) over saved checkpoints w_t with the
  learning rate η_t in force at each; self-influence TracIn(z, z) ranks mislabelled points, high is suspect.

Matrices are [training points, test points]: one row per training point, in their own order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NEWTON_STEPS = 100
NEWTON_TOLERANCE = 1e-12


def _design(x) -> np.ndarray:
    """Features with a constant column appended for the intercept: [N, D+1] float64."""
    x = np.asarray(x, dtype=np.float64)
    x = x.reshape(len(x), -1)
    return np.concatenate([x, np.ones((len(x), 1))], axis=1)


def _probabilities(w: np.ndarray, design: np.ndarray) -> np.ndarray:
    z = design @ w
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def _targets(y, n: int, classes: int) -> np.ndarray:
    y = np.asarray(y).reshape(-1).astype(np.int64)
    if len(y) != n:
        raise ValueError(f"features and labels differ in length: {n} and {len(y)}")
    if len(y) and (y.min() < 0 or y.max() >= classes):
        raise ValueError(f"labels must lie in 0..{classes - 1}, got {int(y.min())}..{int(y.max())}")
    return np.eye(classes)[y]


def losses(w: np.ndarray, x, y) -> np.ndarray:
    """Per-sample cross-entropy −log p(y | x; W), [N]."""
    design = _design(x)
    p = _probabilities(w, design)
    onehot = _targets(y, len(design), w.shape[1])
    return -np.log(np.maximum((p * onehot).sum(axis=1), 1e-300))


def gradients(w: np.ndarray, x, y) -> np.ndarray:
    """Per-sample gradients of the cross-entropy in W, flattened row-major: [N, (D+1)·C], g_i = x̃_i ⊗ (p_i − e_{y_i})."""
    design = _design(x)
    residual = _probabilities(w, design) - _targets(y, len(design), w.shape[1])
    return (design[:, :, None] * residual[:, None, :]).reshape(len(design), -1)


def hessian(w: np.ndarray, x, l2: float) -> np.ndarray:
    """The training objective's Hessian, (1/n) Σ_i x̃_i x̃_iᵀ ⊗ (diag p_i − p_i p_iᵀ) + λI, [(D+1)·C]²."""
    design = _design(x)
    p = _probabilities(w, design)
    curvature = np.einsum("nc,cd->ncd", p, np.eye(p.shape[1])) - p[:, :, None] * p[:, None, :]
    h = np.einsum("na,nb,ncd->acbd", design, design, curvature) / len(design)
    size = design.shape[1] * p.shape[1]
    return h.reshape(size, size) + l2 * np.eye(size)


def fit_logistic(x, y, classes: int, l2: float) -> np.ndarray:
    """The minimiser of (1/n) Σ_i ℓ(z_i; W) + (λ/2)‖W‖², by Newton's method from zero: W [(D+1), C]."""
    if l2 <= 0:
        raise ValueError(f"the L2 strength must be positive for the Hessian to be invertible, got {l2}")
    design = _design(x)
    w = np.zeros((design.shape[1], classes))
    for _ in range(NEWTON_STEPS):
        grad = gradients(w, x, y).mean(axis=0) + l2 * w.reshape(-1)
        step = np.linalg.solve(hessian(w, x, l2), grad)
        w = w - step.reshape(w.shape)
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    return w


def influence(w: np.ndarray, x_train, y_train, x_test, y_test, l2: float) -> np.ndarray:
    """Koh & Liang's I_up,loss(z_i, z_test) = −∇L(z_test)ᵀ H⁻¹ ∇L(z_i), [N_train, N_test]."""
    solved = np.linalg.solve(hessian(w, x_train, l2), gradients(w, x_train, y_train).T)  # H⁻¹ g_i, [P, N_train]
    return -(gradients(w, x_test, y_test) @ solved).T


def self_influence(w: np.ndarray, x_train, y_train, l2: float) -> np.ndarray:
    """∇L(z_i)ᵀ H⁻¹ ∇L(z_i) per training point, [N]: high is suspect (−I_up,loss(z_i, z_i))."""
    g = gradients(w, x_train, y_train)
    return np.einsum("np,pn->n", g, np.linalg.solve(hessian(w, x_train, l2), g.T))


def tracin(checkpoints: Sequence[tuple[np.ndarray, float]], x_train, y_train, x_test, y_test) -> np.ndarray:
    """Pruthi et al.'s TracInCP, Σ_t η_t ∇ℓ(w_t, z_i) · ∇ℓ(w_t, z′), [N_train, N_test]."""
    if not checkpoints:
        raise ValueError("TracIn needs at least one checkpoint")
    return sum(rate * gradients(w, x_train, y_train) @ gradients(w, x_test, y_test).T for w, rate in checkpoints)


def tracin_self(checkpoints: Sequence[tuple[np.ndarray, float]], x_train, y_train) -> np.ndarray:
    """TracIn(z_i, z_i) = Σ_t η_t ‖∇ℓ(w_t, z_i)‖² per training point, [N]: high is suspect."""
    if not checkpoints:
        raise ValueError("TracIn needs at least one checkpoint")
    return sum(rate * (gradients(w, x_train, y_train) ** 2).sum(axis=1) for w, rate in checkpoints)
