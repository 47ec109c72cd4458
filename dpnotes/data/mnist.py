"""MNIST from the official gzip IDX files, parsed directly (no torchvision)."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dpnotes.data.files import (
    DataIntegrityError,
    ensure_file,
    file_info,
    head_bytes,
    looks_like_html,
)

__all__ = [
    "IDX_IMAGES_MAGIC",
    "IDX_LABELS_MAGIC",
    "MNIST_MEAN",
    "MNIST_STD",
    "MNISTData",
    "load_mnist",
    "normalize",
    "read_idx",
]

#: Magic number of an IDX file of unsigned-byte 3-d arrays (images).
IDX_IMAGES_MAGIC = 2051
#: Magic number of an IDX file of unsigned-byte 1-d arrays (labels).
IDX_LABELS_MAGIC = 2049

#: Mean pixel value of the 60,000 public MNIST training images on the [0, 1] scale,
#: rounded as the PyTorch examples and the reference code of the DPSGD-F paper's
#: MNIST setting (Bagdasaryan et al. 2019) use it: a constant of the public data
#: set, not a statistic of a private one, so standardising with it costs no privacy.
MNIST_MEAN = 0.1307
#: Standard deviation of the same pixels (rounded likewise); see :data:`MNIST_MEAN`.
MNIST_STD = 0.3081

_FILES = {
    "x_train": "mnist/train-images-idx3-ubyte.gz",
    "y_train": "mnist/train-labels-idx1-ubyte.gz",
    "x_test": "mnist/t10k-images-idx3-ubyte.gz",
    "y_test": "mnist/t10k-labels-idx1-ubyte.gz",
}


class MNISTData(NamedTuple):
    """MNIST arrays; unpacks as ``x_train, y_train, x_test, y_test``.

    Attributes:
        x_train: uint8 images, shape (60000, 28, 28), pixel values 0..255.
        y_train: int64 labels 0..9, shape (60000,).
        x_test: uint8 images, shape (10000, 28, 28).
        y_test: int64 labels 0..9, shape (10000,).
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def normalize(x: np.ndarray) -> np.ndarray:
    """Standardise pixels in [0, 1]: ``(x - MNIST_MEAN) / MNIST_STD``, as float32.

    The reference code of the DPSGD-F paper's MNIST setting applies this to the
    training and the test images (``transforms.Normalize((0.1307,), (0.3081,))``).
    The constants are fixed public numbers (:data:`MNIST_MEAN`, :data:`MNIST_STD`),
    so the map is the same for every data set: a data-independent pre-processing.

    Args:
        x: Pixel values in [0, 1] (e.g. ``uint8`` images divided by 255).

    Returns:
        The standardised pixels, float32, same shape.

    Raises:
        ValueError: If a value lies outside [0, 1] (pixels 0..255 not yet scaled).

    Examples:
        >>> [round(v, 4) for v in normalize(np.array([0.0, 1.0])).tolist()]
        [-0.4242, 2.8215]
    """
    x = np.asarray(x, dtype=np.float32)
    if x.size and (float(x.min()) < 0.0 or float(x.max()) > 1.0):
        raise ValueError(
            f"normalize expects pixels in [0, 1], got values in [{float(x.min())}, "
            f"{float(x.max())}]; divide 0..255 pixel values by 255 first."
        )
    return ((x - np.float32(MNIST_MEAN)) / np.float32(MNIST_STD)).astype(np.float32)


def read_idx(path: str | os.PathLike[str], magic: int) -> np.ndarray:
    """Read a gzip-compressed unsigned-byte IDX file and check its structure.

    The IDX format is a 4-byte big-endian magic number (``0x0000 08 0D``: unsigned
    bytes, ``D`` dimensions, so 2049 for 1-d labels and 2051 for 3-d images), then
    ``D`` big-endian uint32 sizes, then the payload in C order.

    Args:
        path: The ``.gz`` file.
        magic: The expected magic number, :data:`IDX_IMAGES_MAGIC` or
            :data:`IDX_LABELS_MAGIC`.

    Returns:
        A writable uint8 array with the shape given in the header.

    Raises:
        ValueError: (:class:`~dpnotes.data.DataIntegrityError`) if the file is not
            gzip, is HTML, is truncated, has another magic number, or its payload length
            does not match the header.

    References:
        lecun1998mnist
    """
    path = os.fspath(path)
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read()
    except (OSError, EOFError, zlib.error) as err:
        html = (
            " It is an HTML page, not data." if looks_like_html(_head_of(path)) else ""
        )
        raise DataIntegrityError(
            f"{path} is not a complete gzip file ({err}).{html} It is truncated or "
            "not the original download: delete it and load again to re-download it."
        ) from err
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    found = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else None
    if found is not None and found != magic:
        raise DataIntegrityError(
            f"{path} has IDX magic number {found}, expected {magic} "
            f"({'images' if magic == IDX_IMAGES_MAGIC else 'labels'}). Is it the "
            "wrong file (images and labels swapped?) or corrupt? Delete it and load "
            "again."
        )
    if len(raw) < header:
        raise DataIntegrityError(
            f"{path} is too short ({len(raw)} bytes) to hold an IDX header. Delete it "
            "and load again to re-download it."
        )
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = int(np.prod(dims, dtype=np.int64))
    if len(raw) - header != expected:
        raise DataIntegrityError(
            f"{path} has {len(raw) - header:,} payload bytes, but its header {dims} "
            f"announces {expected:,}: the file is truncated or corrupt. Delete it and "
            "load again to re-download it."
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims).copy()


def _head_of(path: str) -> bytes:
    try:
        return head_bytes(Path(path))
    except OSError:
        return b""


def load_mnist(root: str | os.PathLike[str] | None = None) -> MNISTData:
    """Load MNIST as numpy arrays from the four official gzip IDX files.

    Files are looked up under ``<root>/mnist/`` (``train-images-idx3-ubyte.gz``, ...)
    and downloaded from a mirror of the official files when missing; each is checked
    against its sha256, then parsed with :func:`read_idx` (magic numbers, dimensions,
    payload length) and cross-checked (28x28 images, as many labels as images, labels
    in 0..9).

    Args:
        root: Data root; see :func:`dpnotes.data.data_root`.

    Returns:
        :class:`MNISTData` ``(x_train, y_train, x_test, y_test)``: uint8 images of shape
        (n, 28, 28) and int64 labels; 60,000 training and 10,000 test examples.

    Raises:
        ValueError: If a file has the wrong sha256, is not gzip/IDX, or is truncated.
        DataNotFoundError: If a file is missing and cannot be downloaded.

    References:
        lecun1998mnist
    """
    paths = {key: ensure_file(file_info(rel), root) for key, rel in _FILES.items()}
    arrays = {}
    for split in ("train", "test"):
        x = read_idx(paths[f"x_{split}"], IDX_IMAGES_MAGIC)
        y = read_idx(paths[f"y_{split}"], IDX_LABELS_MAGIC)
        if x.shape[1:] != (28, 28):
            raise DataIntegrityError(
                f"{paths[f'x_{split}']} holds images of shape {x.shape[1:]}, not "
                "28x28: not an MNIST file."
            )
        if x.shape[0] != y.shape[0]:
            raise DataIntegrityError(
                f"MNIST {split} split has {x.shape[0]} images but {y.shape[0]} labels; "
                "one of the two files is from another version. Delete both and reload."
            )
        if y.size and int(y.max()) > 9:
            raise DataIntegrityError(
                f"{paths[f'y_{split}']} has label {int(y.max())}; MNIST labels are "
                "0..9."
            )
        arrays[f"x_{split}"] = x
        arrays[f"y_{split}"] = y.astype(np.int64)
    return MNISTData(**arrays)
