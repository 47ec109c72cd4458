"""Print the power of the privacy audits of the spending paper's mechanisms.

The tests audit :class:`dpnotes.importance.DPLogisticRegression` and
:meth:`dpnotes.importance.superquail.SuperQUAIL.fit` with
:func:`dpnotes.audit.audit_epsilon`; a passing audit means little unless the audit
would have failed for a mechanism that overspends. This script measures that: it
repeats the tests' own audit (same neighbours, statistic, claim and trials, imported
from the test modules) on mechanisms that truly spend ``factor`` times the claimed
epsilon, and prints how often the audit refutes the claim, with a Clopper–Pearson
interval (:func:`dpnotes.audit.audit_power`), and the smallest factor caught with at
least 80% power.

* ``lr``: ``DPLogisticRegression(epsilon=factor * 2)`` audited against epsilon 2 under
  replacing one record (``tests/test_importance_classifier.py``); 3000 runs per data
  set, about 20 s per audit on one core.
* ``superquail``: ``SuperQUAIL(epsilon=factor * 1)`` audited against epsilon 1 under
  adding or removing one record, through its target classifier
  (``tests/test_importance_superquail_audit.py``); 300 runs per data set, about 8 to
  16 s per audit. Note that ``alpha`` drops from 0.7 to 0.5 above ``e^2``.
* ``superquail-target``: the same audit of ``SuperQUAIL(epsilon=1)`` whose target
  classifier silently overspends so that the fit spends ``factor`` in all (the test's
  planted bug is ``factor = 7.65``, the classifier at 20 times its share).

Run: ``python scripts/audit_power.py --audit lr --factors 1 1.5 2 3 --repeats 10``.
The work is one process on one core; split long tables over several calls with
``--factors``, giving each call its own ``--seed`` (streams are spawned by the
factor's position in the list, so two calls with one seed would reuse them).
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from dpnotes.audit import audit_power

ROOT = Path(__file__).resolve().parents[1]


def load_test_module(name: str) -> ModuleType:
    """Import ``tests/<name>.py`` (the audits are defined where they are tested)."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def audit_setup(which: str) -> dict:
    """The tests' audit: family, neighbours, claim, statistic and default trials."""
    if which == "lr":
        t = load_test_module("test_importance_classifier")
        return {
            "what": "DPLogisticRegression, replace one record",
            "family": t.dp_lr_family,
            "d0": t.AUDIT_D0,
            "d1": t.AUDIT_REPLACED,
            "epsilon": t.AUDIT_EPSILON,
            "delta": 0.0,
            "statistic": t.noise_gap(t.AUDIT_D0, t.AUDIT_REPLACED),
            "trials": t.AUDIT_TRIALS_2X,
        }
    t = load_test_module("test_importance_superquail_audit")
    family, what = {
        "superquail": (t.superquail_family, "SuperQUAIL(epsilon=factor)"),
        "superquail-target": (
            t.target_overspend_family,
            "SuperQUAIL(epsilon=1), its target classifier overspending to a total "
            "of factor",
        ),
    }[which]
    return {
        "what": f"{what}; target classifier's loss; add/remove one record",
        "family": family,
        "d0": t.D0,
        "d1": t.D1,
        "epsilon": t.EPSILON,
        "delta": t.DELTA,
        "statistic": None,
        "trials": t.TRIALS_SQ,
    }


def cpu_model() -> str:
    """The processor's name (from /proc/cpuinfo on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--audit", choices=("lr", "superquail", "superquail-target"), default="lr"
    )
    parser.add_argument(
        "--factors", type=float, nargs="+", default=[1.0, 1.5, 2.0, 3.0]
    )
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--trials", type=int, default=None, help="the tests' default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--power", type=float, default=0.8)
    args = parser.parse_args(argv)

    setup = audit_setup(args.audit)
    trials = args.trials or setup["trials"]
    started = time.perf_counter()
    result = audit_power(
        setup["family"],
        setup["d0"],
        setup["d1"],
        epsilon=setup["epsilon"],
        delta=setup["delta"],
        factors=tuple(args.factors),
        repeats=args.repeats,
        trials=trials,
        rng=np.random.default_rng(args.seed),
        statistic=setup["statistic"],
        progress=True,
    )
    seconds = time.perf_counter() - started
    print(f"audit: {setup['what']}")
    print(
        f"claim: epsilon={result.epsilon:g}, delta={result.delta:g}; each audit "
        f"{trials} runs per data set, {result.confidence:.0%} lower bound; "
        f"{args.repeats} audits per factor; seed {args.seed}"
    )
    print(f"cpu: {cpu_model()} (one process); wall time {seconds:.0f} s")
    print(result.table())
    for conservative, how in ((False, "estimated"), (True, "interval's lower end")):
        f = result.smallest_factor(args.power, conservative=conservative)
        caught = "none of the factors" if f is None else f"{f:g}x"
        print(
            f"smallest overspend caught with >= {args.power:.0%} power "
            f"({how}): {caught}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
