"""A differentially private logistic regression whose guarantee holds as stated.

:class:`DPLogisticRegression` wraps diffprivlib's ``LogisticRegression`` (objective
perturbation, Chaudhuri, Monteleoni and Sarwate 2011, Algorithm 2) and supplies the
three things its proof needs and diffprivlib cannot check:

1. **Rows of norm at most 1.** Each record is encoded as the one-hot vectors of its
   features over their *public* domains followed by a constant 1, all divided by
   ``sqrt(m + 1)`` for ``m`` features, so every row has norm exactly 1
   (:func:`encode_unit_norm`). diffprivlib is told ``data_norm=1`` and fits no separate
   intercept (the constant column is the intercept), so its noise is calibrated to the
   true norm and nothing is read off the data.
2. **Every class of the target present.** diffprivlib takes its classes from the labels
   it sees, so a class absent from the data could never be predicted, and its absence
   would show. Before fitting, one fixed *anchor row* per class of the target's public
   domain is appended: features all zero, constant ``1 / sqrt(m + 1)``, label ``k``.
   The anchors do not depend on the data, so the fit is ``M(D ∪ A)`` for a fixed set
   ``A``; if ``D`` and ``D'`` are neighbours (one record added, removed or replaced),
   so are ``D ∪ A`` and ``D' ∪ A``, and the guarantee is unchanged. The anchors bias
   the model slightly towards equal class probabilities for a record with no
   information; with ``K`` classes and ``n`` records that is ``K`` pseudo-records
   against ``n``.
3. **Public domains and classes.** The domain is a public specification
   (:mod:`dpnotes.synth.domain`: attribute -> number of codes); values outside it are
   refused, never used to widen it.

:class:`NonPrivateLogisticRegression` fits the same model without noise (scikit-learn)
on the same encoding. It is **not private**: a reference for comparisons only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpnotes.rng import check_rng
from dpnotes.synth.domain import Domain, check_data, check_domain
from dpnotes.validation import check_epsilon, check_int, check_positive

__all__ = [
    "CodesClassifier",
    "DPLogisticRegression",
    "NonPrivateLogisticRegression",
    "encode_unit_norm",
]


def _check_target_features(
    domain: dict[str, int], target: object, features: Sequence[str] | None
) -> tuple[str, tuple[str, ...]]:
    if not isinstance(target, str):
        raise TypeError(
            f"target must be a column name (a string), got {type(target).__name__}."
        )
    if target not in domain:
        raise ValueError(
            f"target {target!r} is not an attribute of the domain {list(domain)}; "
            "pass one of its attributes, or declare the target in the domain."
        )
    if domain[target] < 2:
        raise ValueError(
            f"the target {target!r} has a public domain of {domain[target]} value; a "
            "classifier needs at least two classes. Declare its full public domain."
        )
    if features is None:
        chosen = tuple(a for a in domain if a != target)
    else:
        if isinstance(features, (str, bytes)):
            raise TypeError(
                f"features must be a sequence of column names, got {features!r}; "
                f"write [{features!r}] for one feature."
            )
        chosen = tuple(features)
        unknown = [f for f in chosen if f not in domain]
        if unknown:
            raise ValueError(
                f"features {unknown} are not attributes of the domain {list(domain)}; "
                "pick features among the domain's attributes."
            )
        if target in chosen:
            raise ValueError(
                f"the target {target!r} is among the features; a classifier cannot "
                "use the column it predicts. Remove it from features."
            )
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"features has duplicates: {list(chosen)}.")
    if not chosen:
        raise ValueError(
            "there are no features: the domain holds only the target. Declare at "
            "least one feature attribute."
        )
    return target, chosen


def _offsets(sizes: Sequence[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def _encode_codes(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """One-hot codes plus a constant, scaled to unit norm (codes already checked)."""
    n, m = codes.shape
    width = int(np.sum(sizes)) + 1
    x = np.zeros((n, width))
    rows = np.repeat(np.arange(n), m)
    x[rows, (codes + _offsets(sizes)).ravel()] = 1.0
    x[:, -1] = 1.0
    return x / math.sqrt(m + 1)


def encode_unit_norm(
    df: pd.DataFrame, domain: Domain, features: Sequence[str]
) -> np.ndarray:
    """Encode records as unit-norm rows: one-hot over the public domain and a constant.

    Row ``i`` is ``[onehot(x_i1), ..., onehot(x_im), 1] / sqrt(m + 1)``; each one-hot
    block has one entry per public code, so the width is ``sum(sizes) + 1`` whatever
    the data hold, and every row has Euclidean norm exactly 1.

    Args:
        df: Records with (at least) the ``features`` columns, as codes of ``domain``.
        domain: The public domain (attribute -> number of codes).
        features: The columns to encode, in this order.

    Returns:
        A float array of shape ``(len(df), sum(domain[f] for f in features) + 1)``.

    Raises:
        ValueError: If a feature is not in the domain or not in ``df``, or a value is
            missing or outside the domain.
        TypeError: If ``df`` is not a DataFrame.

    Examples:
        >>> x = encode_unit_norm(pd.DataFrame({"A": [0, 2]}), {"A": 3}, ["A"])
        >>> x.shape, np.allclose(np.linalg.norm(x, axis=1), 1.0)
        ((2, 4), True)
    """
    domain = check_domain(domain)
    features = list(features)
    unknown = [f for f in features if f not in domain]
    if unknown:
        raise ValueError(f"features {unknown} are not in the domain {list(domain)}.")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    sub = {f: domain[f] for f in features}
    data = check_data(df[[f for f in features if f in df.columns]], sub, "df")
    return _encode_codes(data.to_numpy(), [domain[f] for f in features])


class CodesClassifier:
    """A linear classifier on public-domain codes: input checks and prediction.

    The shared base of :class:`DPLogisticRegression` and
    :class:`NonPrivateLogisticRegression`: records go in as codes of the public domain,
    probabilities come out with one column per public class of the target. Fitting is
    the subclasses' business.
    """

    def __init__(self) -> None:
        self.domain_: dict[str, int] | None = None
        self.target_: str | None = None
        self.features_: tuple[str, ...] = ()
        self.coef_: np.ndarray | None = None

    def _prepare(
        self,
        df: pd.DataFrame,
        domain: Domain,
        target: str,
        features: Sequence[str] | None,
        *,
        allow_empty: bool = False,
    ) -> tuple[dict[str, int], str, tuple[str, ...], pd.DataFrame]:
        domain = check_domain(domain)
        target, chosen = _check_target_features(domain, target, features)
        data = check_data(df, domain, allow_empty=allow_empty)
        return domain, target, chosen, data

    @property
    def classes_(self) -> np.ndarray:
        """The target's public codes ``0 .. K - 1`` (all of them, present or not)."""
        self._check_fitted()
        return np.arange(self.domain_[self.target_])

    def _check_fitted(self) -> None:
        if self.coef_ is None:
            raise RuntimeError(
                f"{type(self).__name__} is not fitted; call fit(df, domain, "
                "target=..., rng=...) first."
            )

    def _codes(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        sizes = np.array([self.domain_[f] for f in self.features_])
        if isinstance(X, pd.DataFrame):
            cols = [str(c) for c in X.columns]
            unknown = [c for c in cols if c not in self.domain_]
            if unknown:
                raise ValueError(
                    f"X has columns {unknown} that are not in the fitted domain "
                    f"{list(self.domain_)}; drop them or rename them."
                )
            missing = [f for f in self.features_ if f not in cols]
            if missing:
                raise ValueError(
                    f"X lacks the feature column(s) {missing}; the model was fitted "
                    f"on {list(self.features_)}."
                )
            sub = {f: self.domain_[f] for f in self.features_}
            return check_data(X[list(self.features_)], sub, "X").to_numpy()
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[1] != len(self.features_):
            raise ValueError(
                f"X must be a DataFrame or an array of shape (n, "
                f"{len(self.features_)}) with the codes of {list(self.features_)} "
                f"in that order; got shape {arr.shape}."
            )
        if arr.shape[0] == 0:
            raise ValueError("X has no rows; pass at least one record.")
        if not np.issubdtype(arr.dtype, np.integer):
            as_float = np.asarray(arr, dtype=float)
            if not np.all(np.isfinite(as_float)) or np.any(
                as_float != np.round(as_float)
            ):
                raise ValueError("X must hold integer codes; got non-integer values.")
        codes = np.asarray(arr, dtype=np.int64)
        if np.any(codes < 0) or np.any(codes >= sizes):
            bad = np.flatnonzero(np.any((codes < 0) | (codes >= sizes), axis=0))
            raise ValueError(
                f"X has codes outside the public domain in column(s) "
                f"{[self.features_[i] for i in bad]}; codes must lie in 0..size-1."
            )
        return codes

    def decision_function(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Return the linear scores, shape ``(n,)`` for two classes, else ``(n, K)``.

        Args:
            X: A DataFrame holding the feature columns (other columns of the fitted
                domain, such as the target, are ignored), or an integer array of
                codes with the features in ``features_`` order.

        Raises:
            ValueError: If a column is unknown or missing, or a code is outside the
                public domain.
            RuntimeError: If called before ``fit``.
        """
        self._check_fitted()
        codes = self._codes(X)
        sizes = [self.domain_[f] for f in self.features_]
        idx = codes + _offsets(sizes)
        # A one-hot row selects one weight per feature: gather instead of a dense
        # matrix product (SAGE calls this on millions of rows).
        w = self.coef_
        scores = w[:, idx].sum(axis=2) + w[:, -1][:, None]
        scores = scores.T / math.sqrt(len(sizes) + 1)
        return scores[:, 0] if w.shape[0] == 1 else scores

    def predict_proba(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Return class probabilities, one column per public class ``0 .. K - 1``.

        Two classes: ``[1 - p, p]`` with ``p`` the logistic function of the score.
        More classes: one-vs-rest probabilities normalised to sum to one (as
        scikit-learn's one-vs-rest logistic regression).

        Args:
            X: As :meth:`decision_function`.

        Returns:
            An array of shape ``(n, K)``.
        """
        scores = self.decision_function(X)
        p = 0.5 * (1.0 + np.tanh(0.5 * scores))  # the logistic function, overflow-free
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        total = p.sum(axis=1, keepdims=True)
        # Where every class's score is so negative that its logistic is 0.0 in floating
        # point, normalise in log space instead (the same limit, not 0 / 0).
        under = total[:, 0] == 0.0
        total[under] = 1.0
        p = p / total
        if under.any():
            log_p = -np.logaddexp(0.0, -scores[under])
            log_p -= log_p.max(axis=1, keepdims=True)
            q = np.exp(log_p)
            p[under] = q / q.sum(axis=1, keepdims=True)
        return p

    def predict(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Return the most probable class code of each record (ties: the lower code)."""
        return np.argmax(self.predict_proba(X), axis=1)


class DPLogisticRegression(CodesClassifier):
    """Differentially private logistic regression on public-domain codes.

    Args:
        epsilon: The privacy budget (pure DP).
        C: Inverse regularisation strength of the objective
            ``sum_i loss(w . x_i) + ||w||**2 / (2 C) + b . w`` (diffprivlib's scaling).
            A larger ``C`` leaves less of ``epsilon`` for the noise vector
            (``epsilon' = epsilon - 2 log(1 + C / 4)``). The default 0.1 did best or
            near best on New Mexico ACSEmployment at epsilon 0.25 to 7.4 among 0.01,
            0.03, 0.1, 0.3 and 1 (measured when this class was written); it is a
            fixed public setting, not tuned per data set.
        max_iter: L-BFGS iterations.
        tol: L-BFGS gradient tolerance. Objective perturbation's proof assumes the
            exact minimiser; a small tolerance keeps the solution close to it.

    Attributes:
        domain_: The public domain of the last fit.
        target_: The target column.
        features_: The feature columns, in encoding order.
        coef_: Weights over the encoding, shape ``(1, width)`` for two classes,
            ``(K, width)`` for ``K > 2`` (one-vs-rest); the last entry is the constant.

    Privacy:
        ``epsilon``-DP under replacing one record, for every input, because every
        encoded row has norm at most 1 (chaudhuri2011differentially, Theorem 9; with
        ``data_norm=1`` diffprivlib's noise and its ``epsilon'`` are exactly the
        theorem's). With ``K > 2`` classes each one-vs-rest model gets ``epsilon / K``
        (sequential composition). Under adding or removing one record the same proof,
        with one rank-one Hessian term instead of two and a noise vector that moves by
        at most 1 instead of 2, gives ``epsilon / 2`` (the objective's minimiser does
        not depend on ``n``); the package claims the conservative ``epsilon`` under
        both relations. The fixed anchor rows (module docstring) change neither.
        Caveat of every objective-perturbation implementation: the proof is for the
        exact minimiser and L-BFGS stops at ``tol``.

    References:
        chaudhuri2011differentially, Algorithm 2 and Theorem 9;
        holohan2019diffprivlib.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(
        ...     {"A": rng.integers(0, 3, 200), "Y": rng.integers(0, 2, 200)})
        >>> clf = DPLogisticRegression(epsilon=1.0).fit(
        ...     df, {"A": 3, "Y": 2}, target="Y", rng=rng)
        >>> clf.predict_proba(df).shape, clf.epsilon_spent
        ((200, 2), 1.0)
    """

    def __init__(
        self,
        *,
        epsilon: float,
        C: float = 0.1,
        max_iter: int = 1000,
        tol: float = 1e-8,
    ) -> None:
        super().__init__()
        self.epsilon = check_epsilon(epsilon)
        self.C = check_positive(C, "C")
        self.max_iter = check_int(max_iter, "max_iter", minimum=1)
        self.tol = check_positive(tol, "tol")
        self.model_ = None

    def fit(
        self,
        df: pd.DataFrame,
        domain: Domain,
        *,
        target: str,
        rng: np.random.Generator,
        features: Sequence[str] | None = None,
        allow_empty: bool = False,
    ) -> DPLogisticRegression:
        """Fit on ``df`` (codes of the public ``domain``) to predict ``target``.

        Args:
            df: The private records, exactly the domain's columns, at least one row
                (unless ``allow_empty``).
            domain: The public domain (attribute -> number of codes).
            target: The column to predict; its classes are its public codes.
            rng: The random generator (seeds diffprivlib's noise).
            features: The columns to predict from; default every other attribute.
            allow_empty: Accept a frame with no rows and fit on the fixed anchor rows
                alone. A caller whose records are split by a public rule (one
                classifier per group) needs it: whether a part is empty depends on
                the data, so refusing an empty part would reveal it. The mechanism
                and its guarantee are the same: the fit is ``M(D ∪ A)`` with ``D``
                empty.

        Returns:
            ``self``.

        Raises:
            ValueError: If ``df`` is empty (and ``allow_empty`` is false), its
                columns differ from the domain's, a value is outside the domain, the
                target or a feature is unknown, or the target is among the features.
            TypeError: If ``rng`` is not a numpy Generator or ``df`` not a DataFrame.
        """
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LogisticRegression

        domain, target, chosen, data = self._prepare(
            df, domain, target, features, allow_empty=bool(allow_empty)
        )
        rng = check_rng(rng)
        sizes = [domain[f] for f in chosen]
        x = _encode_codes(data[list(chosen)].to_numpy(), sizes)
        k = domain[target]
        anchors = np.zeros((k, x.shape[1]))
        anchors[:, -1] = 1.0 / math.sqrt(len(chosen) + 1)
        x = np.vstack([x, anchors])
        y = np.concatenate([data[target].to_numpy(), np.arange(k)])
        model = LogisticRegression(
            epsilon=self.epsilon,
            data_norm=1.0,
            fit_intercept=False,
            C=self.C,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=np.random.RandomState(int(rng.integers(0, 2**32))),
            # A private ledger per fit: diffprivlib's default accountant is global.
            accountant=BudgetAccountant(),
        )
        with warnings.catch_warnings():
            # lbfgs may stop at max_iter; the guarantee does not depend on it.
            warnings.filterwarnings("ignore", message="lbfgs failed to converge")
            # diffprivlib 0.6.6 passes an L-BFGS option that SciPy deprecates.
            warnings.filterwarnings(
                "ignore", message="scipy.optimize: The `disp` and `iprint`"
            )
            model.fit(x, y)
        self.model_ = model
        self.domain_, self.target_, self.features_ = domain, target, chosen
        self.coef_ = np.asarray(model.coef_, dtype=float)
        return self

    @property
    def epsilon_spent(self) -> float:
        """The epsilon spent by the last ``fit`` (0 before fitting)."""
        return 0.0 if self.coef_ is None else self.epsilon

    def __repr__(self) -> str:
        return f"DPLogisticRegression(epsilon={self.epsilon:g}, C={self.C:g})"


class NonPrivateLogisticRegression(CodesClassifier):
    """Logistic regression without privacy, on the same unit-norm encoding.

    **Not private**: a reference for comparisons (the "real" models of the book's
    tables), never a release. Same interface as :class:`DPLogisticRegression`, fitted
    with scikit-learn, also with one anchor row per class so both see the same classes.

    Args:
        C: Inverse regularisation strength, as :class:`DPLogisticRegression`.
        max_iter: L-BFGS iterations.

    Privacy:
        None: the fitted weights are a deterministic function of the records.
    """

    def __init__(self, *, C: float = 1.0, max_iter: int = 1000) -> None:
        super().__init__()
        self.C = check_positive(C, "C")
        self.max_iter = check_int(max_iter, "max_iter", minimum=1)

    def fit(
        self,
        df: pd.DataFrame,
        domain: Domain,
        *,
        target: str,
        features: Sequence[str] | None = None,
    ) -> NonPrivateLogisticRegression:
        """Fit on ``df`` (codes of the public ``domain``) to predict ``target``.

        Raises:
            ValueError: As :meth:`DPLogisticRegression.fit`.
        """
        from sklearn.linear_model import LogisticRegression

        domain, target, chosen, data = self._prepare(df, domain, target, features)
        sizes = [domain[f] for f in chosen]
        x = _encode_codes(data[list(chosen)].to_numpy(), sizes)
        k = domain[target]
        anchors = np.zeros((k, x.shape[1]))
        anchors[:, -1] = 1.0 / math.sqrt(len(chosen) + 1)
        x = np.vstack([x, anchors])
        y = np.concatenate([data[target].to_numpy(), np.arange(k)])
        # The regularisation of scikit-learn's objective, sum-scaled as diffprivlib's.
        model = LogisticRegression(
            C=self.C, fit_intercept=False, max_iter=self.max_iter
        )
        if k > 2:
            from sklearn.multiclass import OneVsRestClassifier

            ovr = OneVsRestClassifier(model).fit(x, y)
            coef = np.vstack([e.coef_ for e in ovr.estimators_])
        else:
            coef = model.fit(x, y).coef_
        self.domain_, self.target_, self.features_ = domain, target, chosen
        self.coef_ = np.asarray(coef, dtype=float)
        return self

    def __repr__(self) -> str:
        return f"NonPrivateLogisticRegression(C={self.C:g})"
