"""Tests for dpnotes.lab.attribute: a result's commit proven by its module digests."""

from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest

from dpnotes.lab import run
from dpnotes.lab.attribute import _digest_at, attribute
from dpnotes.lab.cli import main
from dpnotes.lab.runner import device_info
from dpnotes.lab.store import META, result_folder

NAME = "log_size_sum"


def _head() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
    )
    if out.returncode != 0:
        pytest.skip("needs the git repository of the package")
    return out.stdout.strip()


@pytest.fixture
def stored(tmp_path):
    """A stored smoke result whose recorded code is HEAD's, but named as dirty."""
    head = _head()
    run(NAME, "smoke", root=tmp_path, progress=False)
    path = result_folder(tmp_path, NAME, "smoke", 0) / META
    meta = json.loads(path.read_text())
    # The digests of HEAD's modules (the working tree may differ from HEAD).
    meta["code_digests"] = {m: _digest_at(m, head) for m in meta["code_digests"]}
    assert all(meta["code_digests"].values())
    meta["code_version"] = "0.2.0+g0123456789ab.dirty"
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return tmp_path, path, head


def test_attributes_the_commit_whose_digests_match(stored) -> None:
    root, path, head = stored
    entry = attribute(
        NAME, "smoke", commit="HEAD", root=root, accelerator="NVIDIA H200"
    )
    meta = json.loads(path.read_text())
    assert meta["code_version"] == entry["code_version"] == f"0.2.0+g{head}"
    assert meta["attributed"][-1]["old_code_version"] == "0.2.0+g0123456789ab.dirty"
    assert meta["attributed"][-1]["modules_checked"] == len(meta["code_digests"])
    assert meta["device"]["accelerator"] == "NVIDIA H200"
    assert meta["attributed"][-1]["old_accelerator"] == "none"
    # Now it names a clean commit: nothing more to attribute.
    with pytest.raises(ValueError, match="already names the clean commit"):
        attribute(NAME, "smoke", commit="HEAD", root=root)


def test_a_differing_module_is_named_and_nothing_written(stored) -> None:
    root, path, _ = stored
    meta = json.loads(path.read_text())
    module = sorted(meta["code_digests"])[0]
    meta["code_digests"][module] = "0" * 64
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    before = path.read_bytes()
    with pytest.raises(ValueError, match=f"the code of {module} at commit"):
        attribute(NAME, "smoke", commit="HEAD", root=root)
    assert path.read_bytes() == before


def test_unknown_commit_missing_result_and_check_only(stored, tmp_path) -> None:
    root, path, _ = stored
    with pytest.raises(ValueError, match="not a commit of this repository"):
        attribute(NAME, "smoke", commit="no-such-commit", root=root)
    with pytest.raises(ValueError, match="nothing is stored"):
        attribute(NAME, "quick", commit="HEAD", root=root)
    before = path.read_bytes()
    args = ["--results", str(root), "attribute", NAME, "--profile", "smoke"]
    assert main([*args, "--commit", "HEAD", "--check"]) == 0
    assert path.read_bytes() == before
    assert main([*args, "--commit", "HEAD"]) == 0
    assert "attributed" in json.loads(path.read_text())


def test_device_of_a_cpu_config_does_not_need_torch() -> None:
    info = device_info(SimpleNamespace(device="cpu"))
    assert {"platform", "machine", "cpu_count", "accelerator"} <= set(info)
    assert isinstance(device_info(SimpleNamespace(device="auto"))["accelerator"], str)
