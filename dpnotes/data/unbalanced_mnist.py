"""Unbalanced MNIST, the DPSGD-F paper's image task (Xu, Du, Wu 2021, section 6.1).

The training set with class 8 cut to 500 examples (54,649 images), the full test set;
the groups are the ten digits (:func:`load_unbalanced_mnist`, a
:class:`~dpnotes.data.splits.GroupedSplit`). The official files are read by
:func:`dpnotes.data.mnist.load_mnist`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from dpnotes.data.mnist import load_mnist
from dpnotes.data.splits import GroupedSplit
from dpnotes.rng import check_rng
from dpnotes.validation import check_int

__all__ = [
    "MNIST_MINORITY_CLASS",
    "MNIST_MINORITY_SIZE",
    "load_unbalanced_mnist",
    "unbalanced_indices",
]

#: The digit the paper makes the minority of unbalanced MNIST.
MNIST_MINORITY_CLASS: int = 8
#: How many of the minority digit's training images unbalanced MNIST keeps.
MNIST_MINORITY_SIZE: int = 500


def unbalanced_indices(
    labels: Sequence[int] | np.ndarray,
    *,
    minority_class: int = MNIST_MINORITY_CLASS,
    minority_size: int = MNIST_MINORITY_SIZE,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return the sorted indices that keep ``minority_size`` examples of one class.

    Every example of the other classes is kept; of ``minority_class``, a uniformly
    random subset of ``minority_size`` examples (without replacement) is kept.

    Args:
        labels: Integer class labels, one-dimensional.
        minority_class: The class to cut down.
        minority_size: How many of its examples to keep, at least 1 and at most as
            many as there are.
        rng: Chooses the subset.

    Returns:
        int64 indices into ``labels``, increasing.

    Raises:
        ValueError: If ``minority_size`` exceeds the number of examples of the class.

    Examples:
        >>> unbalanced_indices([0, 1, 1, 1, 0], minority_class=1, minority_size=1,
        ...                    rng=np.random.default_rng(0)).size
        3
    """
    check_rng(rng)
    y = np.asarray(labels)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"labels must be a one-dimensional integer array, got dtype {y.dtype} and "
            f"shape {y.shape}."
        )
    minority_class = check_int(minority_class, "minority_class")
    minority_size = check_int(minority_size, "minority_size", minimum=1)
    members = np.flatnonzero(y == minority_class)
    if minority_size > members.size:
        raise ValueError(
            f"minority_size={minority_size} but class {minority_class} has only "
            f"{members.size} examples; choose minority_size <= {members.size}."
        )
    kept = rng.choice(members, size=minority_size, replace=False)
    return np.sort(np.concatenate([np.flatnonzero(y != minority_class), kept]))


def load_unbalanced_mnist(
    root: str | os.PathLike[str] | None = None,
    *,
    rng: np.random.Generator,
    minority_class: int = MNIST_MINORITY_CLASS,
    minority_size: int = MNIST_MINORITY_SIZE,
) -> GroupedSplit:
    """Load the paper's unbalanced MNIST: class 8 cut to 500 training images.

    The training set keeps every image of the other nine digits and a uniformly
    random subset (chosen by ``rng``) of ``minority_size`` images of
    ``minority_class``: 54,649 images with the defaults. The test set is the full
    official one (10,000 images). The groups are the digits (group id = label).

    Args:
        root: Data root; see :func:`dpnotes.data.data_root`.
        rng: Chooses the kept minority images.
        minority_class: The digit made rare (the paper's 8).
        minority_size: How many of its training images are kept (the paper's 500).

    Returns:
        A :class:`GroupedSplit` with images of shape ``(n, 1, 28, 28)``, float32
        pixels scaled to [0, 1] (divided by 255), group and label ids ``0..9``.

    Raises:
        ValueError: For a class outside 0..9 or more images than the class has, or
            a corrupt file.
        DataNotFoundError: If a file is missing and cannot be downloaded.

    Privacy:
        The subset is drawn independently of the image contents; the training set it
        defines is the private data set DP-SGD protects (add/remove one example).

    References:
        xu2021removing (section 6.1); lecun1998mnist
    """
    check_rng(rng)
    minority_class = check_int(minority_class, "minority_class")
    if not 0 <= minority_class <= 9:
        raise ValueError(
            f"minority_class must be a digit 0..9, got {minority_class}; the paper "
            f"uses {MNIST_MINORITY_CLASS}."
        )
    x_train, y_train, x_test, y_test = load_mnist(root)
    keep = unbalanced_indices(
        y_train, minority_class=minority_class, minority_size=minority_size, rng=rng
    )
    y_train = y_train[keep]
    names = tuple(str(d) for d in range(10))
    return GroupedSplit(
        name="mnist",
        x_train=_scale_pixels(x_train[keep]),
        y_train=y_train,
        g_train=y_train.copy(),
        x_test=_scale_pixels(x_test),
        y_test=y_test,
        g_test=y_test.copy(),
        group_names=names,
        label_names=names,
        feature_names=tuple(f"pixel_{r}_{c}" for r in range(28) for c in range(28)),
    )


def _scale_pixels(images: np.ndarray) -> np.ndarray:
    out = images.astype(np.float32)[:, None, :, :]
    out /= np.float32(255.0)
    return out
