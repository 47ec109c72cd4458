"""Attribute a stored result to the commit whose code computed it, by its digests.

A run records ``code_version`` from git: ``0.2.0+g<commit>``, with ``.dirty`` when the
package differs from that commit. A run on a machine that received a copy of the
working tree rather than the repository (a rented GPU, a cluster node) records the
wrong commit or none, although the code was exactly a commit's. Its ``code_digests``
(the sha256 of each module of the experiment's import closure, normalised as
:func:`dpnotes.lab.fingerprint.normalized_source` does) still say which code ran.

:func:`attribute` reads every one of those modules as it is at a given commit, digests
it the same way and compares: only if every digest is equal is ``code_version`` set
to that commit (the modules checked are the import closure the run recorded), and
an ``attributed`` entry appended to ``meta.json`` with the old and new versions, the
modules checked and the date. Nothing is recomputed and the table is never touched: it
is a statement about which code ran, proven by the digests, not a check of numbers
(that is :func:`dpnotes.lab.restamp`'s).

The same entry can correct the recorded ``device.accelerator`` (``accelerator=``), for
runs whose cells used a GPU in worker processes while the process that recorded the
provenance never imported torch; the old value is kept in the entry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from dpnotes.lab.fingerprint import normalized_source
from dpnotes.lab.registry import get_experiment
from dpnotes.lab.store import META, atomic_write_bytes, result_folder, run_lock

__all__ = ["attribute"]

_REPOSITORY = Path(__file__).resolve().parents[2]


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(_REPOSITORY), *args], capture_output=True, text=True
    )


def _digest_at(name: str, commit: str) -> str | None:
    """The normalised-source sha256 of module ``name`` at ``commit`` (None: absent)."""
    base = name.replace(".", "/")
    for path in (f"{base}/__init__.py", f"{base}.py"):
        shown = _git("show", f"{commit}:{path}")
        if shown.returncode == 0:
            text = shown.stdout
            return hashlib.sha256(normalized_source(text).encode()).hexdigest()
    return None


def attribute(
    name: str,
    profile: str,
    *,
    commit: str,
    seed: int = 0,
    root: str | None = None,
    accelerator: str | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Set a stored result's ``code_version`` to ``commit`` if its digests prove it.

    Args:
        name: The experiment.
        profile: The stored profile.
        commit: A commit of this repository (any form ``git rev-parse`` takes).
        seed: Root seed of the stored result.
        root: Results root (default: the configured one).
        accelerator: If given, the accelerator the cells ran on, replacing the
            recorded ``device.accelerator`` (the old value is kept in the entry).
        write: Rewrite ``meta.json``; False only checks.

    Returns:
        The ``attributed`` entry (written unless ``write=False``).

    Raises:
        ValueError: If nothing is stored, the commit is unknown, or a module's code
            at the commit differs from what the run recorded (the message names the
            modules), or the run already names a clean commit.
    """
    experiment = get_experiment(name)
    folder = result_folder(root, experiment.name, profile, seed)
    meta_path = folder / META
    if not meta_path.is_file():
        raise ValueError(f"nothing is stored for {name} [{profile}] seed {seed}.")
    resolved = _git("rev-parse", "--verify", "--short=12", f"{commit}^{{commit}}")
    if resolved.returncode != 0:
        raise ValueError(
            f"{commit!r} is not a commit of this repository: {resolved.stderr.strip()}"
        )
    short = resolved.stdout.strip()
    with run_lock(folder, what=f"{name} [{profile}]"):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        old = str(meta.get("code_version", ""))
        if "+g" in old and not old.endswith(".dirty"):
            raise ValueError(
                f"{name} [{profile}] already names the clean commit of its code "
                f"({old}); there is nothing to attribute."
            )
        recorded: dict[str, str] = dict(meta.get("code_digests") or {})
        if not recorded:
            raise ValueError(f"{name} [{profile}] recorded no module digests.")
        differ = sorted(m for m, d in recorded.items() if _digest_at(m, short) != d)
        if differ:
            raise ValueError(
                f"the code of {', '.join(differ)} at commit {short} is not the code "
                f"that computed {name} [{profile}]; attribute it to the commit it ran "
                "from, or recompute it."
            )
        version = old.partition("+")[0] or str(meta.get("code_version"))
        entry: dict[str, Any] = {
            "how": "python -m dpnotes attribute: module digests equal at the commit",
            "old_code_version": old,
            "code_version": f"{version}+g{short}",
            "modules_checked": len(recorded),
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
        if accelerator is not None:
            device = dict(meta.get("device") or {})
            entry["old_accelerator"] = device.get("accelerator")
            entry["accelerator"] = accelerator
            device["accelerator"] = accelerator
            meta["device"] = device
        if write:
            meta["code_version"] = entry["code_version"]
            meta.setdefault("attributed", []).append(entry)
            text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
            atomic_write_bytes(meta_path, text.encode())
    return entry
