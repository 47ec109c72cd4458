"""The models of the DPSGD-F experiments (Xu, Du, Wu 2021, section 6).

* :class:`MNISTConvNet` -- the paper's MNIST network: two convolutional and two linear
  layers, 431,080 parameters.
* :class:`LogisticRegression` -- the census model (Adult, Dutch): one linear layer to
  two logits, trained with cross-entropy and L2 regularisation
  :data:`PAPER_WEIGHT_DECAY`.

Both use only layers that opacus' per-sample gradient machinery supports (``Conv2d``,
``Linear``; no batch normalisation, whose statistics mix examples). Their parameters
are drawn from an explicit ``torch.Generator`` with the same distributions as torch's
default initialisation, so a model is reproducible from one seed and building one never
touches the global torch random state.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dpnotes.validation import check_choice, check_int

__all__ = [
    "MNIST_INPUT_SHAPE",
    "PAPER_WEIGHT_DECAY",
    "LogisticRegression",
    "MNISTConvNet",
    "count_parameters",
    "init_parameters",
    "paper_model",
]

#: Shape of one MNIST input: one channel of 28x28 pixels in [0, 1].
MNIST_INPUT_SHAPE: tuple[int, int, int] = (1, 28, 28)

#: The L2 regularisation coefficient of the paper's logistic regression (Adult, Dutch).
#: The model only declares it (as ``model.weight_decay``); the trainer applies it as
#: SGD weight decay, i.e. it adds ``weight_decay * w`` to the update, the gradient of
#: ``weight_decay / 2 * ||w||^2``. The penalty does not depend on the data, so it is
#: added after clipping and noising and costs no privacy.
PAPER_WEIGHT_DECAY: float = 0.01

_DATASETS = ("mnist", "adult", "dutch")


def _check_generator(generator: object) -> torch.Generator | None:
    if generator is None:
        return None
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator or None, got "
            f"{type(generator).__name__}. Derive one from a numpy generator with "
            "dpnotes.rng.torch_generator(rng)."
        )
    if generator.device.type != "cpu":
        raise ValueError(
            f"generator must be a CPU generator, got one on {generator.device}: "
            "models are initialised on the CPU (so that a seed gives the same weights "
            "on every machine); move the model with .to(device) afterwards."
        )
    return generator


def init_parameters(module: nn.Module, *, generator: torch.Generator | None) -> None:
    """Re-initialise every ``Linear`` and ``Conv2d`` in ``module`` from ``generator``.

    The distributions are torch's defaults (``reset_parameters``): weights and biases
    uniform on ``(-b, b)`` with ``b = 1 / sqrt(fan_in)`` (Kaiming-uniform with
    ``a = sqrt(5)``), drawn weight first, then bias, layer by layer in registration
    order. With a generator seeded ``s`` the values equal those of a layer built by
    torch after ``torch.manual_seed(s)``.

    Args:
        module: The module whose layers are (re-)initialised in place.
        generator: The source of randomness; ``None`` uses torch's global generator,
            as torch's own initialisation does (for interactive use only: library code
            always passes a generator).

    Raises:
        TypeError: If ``generator`` is not a ``torch.Generator`` or ``None``.
        ValueError: If it is not a CPU generator.
    """
    generator = _check_generator(generator)
    with torch.no_grad():
        for layer in module.modules():
            if not isinstance(layer, (nn.Linear, nn.Conv2d)):
                continue
            fan_in = nn.init._calculate_fan_in_and_fan_out(layer.weight)[0]
            # Written as torch's kaiming_uniform_(a=sqrt(5)) computes it, so that the
            # bound, and hence the values, agree with torch's bit for bit.
            gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
            bound = math.sqrt(3.0) * gain / math.sqrt(fan_in)
            layer.weight.uniform_(-bound, bound, generator=generator)
            if layer.bias is not None:
                bias_bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                layer.bias.uniform_(-bias_bound, bias_bound, generator=generator)


class MNISTConvNet(nn.Module):
    """The paper's MNIST network (431,080 parameters).

    ``conv 1->20 5x5, ReLU, max-pool 2, conv 20->50 5x5, ReLU, max-pool 2, flatten
    (800), linear 800->500, ReLU, linear 500->10``. Input: a float tensor of shape
    ``(b, 1, 28, 28)`` with pixels in [0, 1]; output: ``(b, 10)`` logits for
    cross-entropy.

    Args:
        generator: Source of the initial weights (see :func:`init_parameters`).

    Attributes:
        weight_decay: L2 regularisation the trainer should apply; 0.0, as the paper
            states none for MNIST.

    References:
        xu2021removing (section 6, "about 431K parameters"); lecun1998mnist

    Examples:
        >>> count_parameters(MNISTConvNet(generator=torch.Generator().manual_seed(0)))
        431080
    """

    weight_decay: float = 0.0

    def __init__(self, *, generator: torch.Generator | None) -> None:
        super().__init__()
        generator = _check_generator(generator)
        # skip_init allocates the layers without torch's own (global-RNG)
        # initialisation; init_parameters then draws from the generator.
        self.conv1 = nn.utils.skip_init(nn.Conv2d, 1, 20, 5)
        self.conv2 = nn.utils.skip_init(nn.Conv2d, 20, 50, 5)
        self.fc1 = nn.utils.skip_init(nn.Linear, 4 * 4 * 50, 500)
        self.fc2 = nn.utils.skip_init(nn.Linear, 500, 10)
        init_parameters(self, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the logits ``(b, 10)`` of images ``(b, 1, 28, 28)``."""
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


class LogisticRegression(nn.Module):
    """Multinomial logistic regression: one linear layer to ``n_classes`` logits.

    The census tasks are binary; they use two logits and cross-entropy rather than
    one logit and a sigmoid so that one trainer and one loss serve MNIST and the
    census data alike. Softmax over two logits is the logistic model in the
    difference of the logits; the redundant half of the parameters is pinned down by
    the L2 penalty ``weight_decay``, which the trainer applies.

    Args:
        n_features: Number of input features ``d``; inputs have shape ``(b, d)``.
        n_classes: Number of classes (logits); 2 for Adult and Dutch.
        generator: Source of the initial weights (see :func:`init_parameters`).
        weight_decay: L2 regularisation coefficient, default the paper's 0.01.

    Raises:
        TypeError, ValueError: For a non-integer or too small ``n_features`` or
            ``n_classes``, or a negative or non-finite ``weight_decay``.

    References:
        xu2021removing (section 6: logistic regression with L2 regularisation 0.01)

    Examples:
        >>> model = LogisticRegression(104, generator=torch.Generator().manual_seed(0))
        >>> count_parameters(model), model.weight_decay
        (210, 0.01)
    """

    def __init__(
        self,
        n_features: int,
        n_classes: int = 2,
        *,
        generator: torch.Generator | None,
        weight_decay: float = PAPER_WEIGHT_DECAY,
    ) -> None:
        super().__init__()
        n_features = check_int(n_features, "n_features", minimum=1)
        n_classes = check_int(n_classes, "n_classes", minimum=2)
        if (
            isinstance(weight_decay, bool)
            or not isinstance(weight_decay, (int, float))
            or not math.isfinite(weight_decay)
            or weight_decay < 0
        ):
            raise ValueError(
                f"weight_decay must be a finite number >= 0, got {weight_decay!r}; "
                f"the paper uses {PAPER_WEIGHT_DECAY}."
            )
        generator = _check_generator(generator)
        self.weight_decay = float(weight_decay)
        self.linear = nn.utils.skip_init(nn.Linear, n_features, n_classes)
        init_parameters(self, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the logits ``(b, n_classes)`` of features ``(b, n_features)``."""
        return self.linear(x)


def count_parameters(model: nn.Module, *, trainable_only: bool = True) -> int:
    """Return the number of (trainable) scalar parameters of ``model``.

    >>> count_parameters(nn.Linear(3, 2))
    8
    """
    return sum(
        p.numel() for p in model.parameters() if p.requires_grad or not trainable_only
    )


def paper_model(
    dataset: str,
    *,
    n_features: int | None = None,
    generator: torch.Generator | None,
) -> nn.Module:
    """Build the paper's model for ``dataset``: the CNN for MNIST, else logistic.

    Args:
        dataset: ``"mnist"``, ``"adult"`` or ``"dutch"``.
        n_features: Input dimension of the logistic regression (required for the
            census data, e.g. ``split.n_features`` of a
            :class:`~dpnotes.data.GroupedSplit`); must be ``None`` or 784 for MNIST.
        generator: Source of the initial weights.

    Returns:
        A freshly initialised :class:`MNISTConvNet` or :class:`LogisticRegression`.

    Raises:
        ValueError: For an unknown data set or a missing/inconsistent ``n_features``.

    References:
        xu2021removing (section 6)
    """
    check_choice(dataset, _DATASETS, "dataset")
    if dataset == "mnist":
        if n_features not in (None, math.prod(MNIST_INPUT_SHAPE)):
            raise ValueError(
                f"the MNIST network takes 28x28 images (784 features), got "
                f"n_features={n_features!r}; leave n_features unset for MNIST."
            )
        return MNISTConvNet(generator=generator)
    if n_features is None:
        raise ValueError(
            f"paper_model({dataset!r}) needs n_features, the width of the encoded "
            "features (split.n_features of the loaded GroupedSplit)."
        )
    return LogisticRegression(n_features, 2, generator=generator)
