"""The package ships its type annotations (PEP 561): ``py.typed`` is in the wheel, and a
type checker run on a user's script sees the annotations of the installed package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]

#: A user's script with one deliberate type error (an epsilon as text) and one
#: correct call.
SCRIPT = """\
from dpnotes.accounting import compose_sequential_pure

total: float = compose_sequential_pure([0.5, 0.25])
wrong: str = compose_sequential_pure([0.5, 0.25])
"""


def test_py_typed_is_in_the_package_and_its_package_data():
    assert (ROOT / "dpnotes" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["dpnotes"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The package built as a wheel and installed (without dependencies) in a folder."""
    tmp = tmp_path_factory.mktemp("typed")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", str(ROOT), "--no-deps",
         "--no-build-isolation", "-w", str(tmp / "wheel")],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = (tmp / "wheel").glob("dpnotes-*.whl")
    assert "dpnotes/py.typed" in zipfile.ZipFile(wheel).namelist()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
         str(tmp / "site"), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return tmp / "site"


def _mypy(script: Path, site: Path) -> subprocess.CompletedProcess:
    # The installed copy comes first on the path (before the checkout's editable
    # install), as a user's site-packages would be.
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
         str(script)],
        capture_output=True, text=True, cwd=script.parent,
        env={"PYTHONPATH": str(site), "PATH": ""},
    )  # fmt: skip


def test_a_type_checker_sees_the_installed_annotations(installed, tmp_path):
    script = tmp_path / "user.py"
    script.write_text(SCRIPT)
    out = _mypy(script, installed)
    # The wrong line is reported with the function's declared return type; the right
    # one is not.
    assert out.returncode == 1, out.stdout + out.stderr
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, out.stdout
    assert "user.py:4:" in errors[0] and '"float"' in errors[0], errors[0]
    # Without the marker mypy skips the package: the check above can fail.
    (installed / "dpnotes" / "py.typed").unlink()
    untyped = _mypy(script, installed)
    assert "missing library stubs or py.typed marker" in untyped.stdout, untyped.stdout
