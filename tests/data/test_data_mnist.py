"""MNIST IDX parsing on tiny gzip files, and its failure modes."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import dpnotes.data as data

_NAMES = {
    "x_train": "train-images-idx3-ubyte.gz",
    "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz",
    "y_test": "t10k-labels-idx1-ubyte.gz",
}


def _idx_images(images: np.ndarray, magic: int = 2051) -> bytes:
    n, rows, cols = images.shape
    header = b"".join(int(v).to_bytes(4, "big") for v in (magic, n, rows, cols))
    return header + images.astype(np.uint8).tobytes()


def _idx_labels(labels: np.ndarray, magic: int = 2049) -> bytes:
    header = b"".join(int(v).to_bytes(4, "big") for v in (magic, len(labels)))
    return header + labels.astype(np.uint8).tobytes()


@pytest.fixture
def tiny_mnist(unpin, tmp_path: Path) -> dict[str, np.ndarray]:
    """Write a 7-train / 3-test MNIST in tmp_path/mnist with unpinned hashes."""
    rng = np.random.default_rng(0)
    arrays = {
        "x_train": rng.integers(0, 256, size=(7, 28, 28)),
        "y_train": np.array([0, 1, 2, 3, 9, 9, 5]),
        "x_test": rng.integers(0, 256, size=(3, 28, 28)),
        "y_test": np.array([7, 8, 0]),
    }
    (tmp_path / "mnist").mkdir()
    for key, name in _NAMES.items():
        unpin(f"mnist/{name}")
        raw = (_idx_images if key.startswith("x") else _idx_labels)(arrays[key])
        (tmp_path / "mnist" / name).write_bytes(gzip.compress(raw))
    return arrays


def test_load_mnist_roundtrip(tiny_mnist, tmp_path: Path) -> None:
    result = data.load_mnist(tmp_path)
    assert isinstance(result, data.MNISTData)
    x_train, y_train, x_test, y_test = result
    assert x_train.shape == (7, 28, 28) and x_test.shape == (3, 28, 28)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.int64
    np.testing.assert_array_equal(x_train, tiny_mnist["x_train"])
    np.testing.assert_array_equal(y_test, tiny_mnist["y_test"])
    x_train[0, 0, 0] = 1  # arrays are ordinary writable arrays


def _rewrite(root: Path, key: str, raw: bytes, compress: bool = True) -> None:
    (root / "mnist" / _NAMES[key]).write_bytes(gzip.compress(raw) if compress else raw)


def test_swapped_files_have_wrong_magic(tiny_mnist, tmp_path: Path) -> None:
    _rewrite(tmp_path, "x_test", _idx_labels(tiny_mnist["y_test"]))
    with pytest.raises(ValueError, match="magic number 2049, expected 2051"):
        data.load_mnist(tmp_path)


def test_payload_shorter_than_header(tiny_mnist, tmp_path: Path) -> None:
    raw = _idx_images(tiny_mnist["x_train"])[:-28]
    _rewrite(tmp_path, "x_train", raw)
    with pytest.raises(ValueError, match=r"5,460 payload bytes.*announces 5,488"):
        data.load_mnist(tmp_path)


def test_truncated_gzip(tiny_mnist, tmp_path: Path) -> None:
    path = tmp_path / "mnist" / _NAMES["x_train"]
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(ValueError, match="not a complete gzip file"):
        data.load_mnist(tmp_path)


def test_html_instead_of_gzip(tiny_mnist, tmp_path: Path) -> None:
    page = b"<!DOCTYPE html><html><body>NoSuchKey</body></html>"
    _rewrite(tmp_path, "y_train", page, compress=False)
    with pytest.raises(ValueError, match="HTML page"):
        data.load_mnist(tmp_path)


def test_too_short_for_header(tiny_mnist, tmp_path: Path) -> None:
    _rewrite(tmp_path, "y_test", b"\x00\x00\x08")
    with pytest.raises(ValueError, match="too short"):
        data.load_mnist(tmp_path)


def test_label_and_image_counts_must_match(tiny_mnist, tmp_path: Path) -> None:
    _rewrite(tmp_path, "y_test", _idx_labels(np.array([1, 2])))
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        data.load_mnist(tmp_path)


def test_labels_must_be_digits(tiny_mnist, tmp_path: Path) -> None:
    _rewrite(tmp_path, "y_test", _idx_labels(np.array([1, 2, 10])))
    with pytest.raises(ValueError, match="label 10"):
        data.load_mnist(tmp_path)


def test_images_must_be_28_by_28(tiny_mnist, tmp_path: Path) -> None:
    _rewrite(tmp_path, "x_test", _idx_images(np.zeros((3, 14, 14))))
    with pytest.raises(ValueError, match="not 28x28"):
        data.load_mnist(tmp_path)


def test_read_idx_direct(tmp_path: Path) -> None:
    path = tmp_path / "labels.gz"
    path.write_bytes(gzip.compress(_idx_labels(np.arange(10))))
    np.testing.assert_array_equal(data.read_idx(path, 2049), np.arange(10))
    with pytest.raises(ValueError, match="expected 2051"):
        data.read_idx(path, 2051)


def test_pinned_mnist_file_with_wrong_content(tmp_path: Path) -> None:
    (tmp_path / "mnist").mkdir()
    for name in _NAMES.values():
        (tmp_path / "mnist" / name).write_bytes(gzip.compress(b"\x00" * 8))
    with pytest.raises(data.DataIntegrityError, match=r"train-images-idx3-ubyte\.gz"):
        data.load_mnist(tmp_path)
