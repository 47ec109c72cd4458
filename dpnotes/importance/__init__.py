"""Feature importance under differential privacy: DPSAGE, its ranking metrics, and
SuperQUAIL, the synthesizer that spends its budget where DPSAGE says it matters.

* :mod:`dpnotes.importance.classifier` -- a DP logistic regression whose guarantee
  holds (unit-norm rows over public domains, every class present through fixed anchor
  rows), and its non-private twin for reference.
* :mod:`dpnotes.importance.dpsage` -- DPSAGE (Rosenblatt, Allen, Stoyanovich 2022,
  Algorithm 1): SAGE on a DP classifier, explained with a DP synthesizer's samples; and
  the non-private "real SAGE" reference.
* :mod:`dpnotes.importance.ranking` -- nDCG, Jaccard and MAP of the top k (the paper's
  Table 2), with gains and relevance defined.
* :mod:`dpnotes.importance.superquail` -- SuperQUAIL, FSQ-Bal and FSQ-FNR (the same
  paper, Algorithm 2 and Section 4): an MST plus DP classifiers of the most important
  features. It lives here, beside DPSAGE which it calls, so that the import graph has
  no cycle (:mod:`dpnotes.synth` does not import this package).
"""

from dpnotes.importance.classifier import (
    CodesClassifier,
    DPLogisticRegression,
    NonPrivateLogisticRegression,
    encode_unit_norm,
)
from dpnotes.importance.dpsage import (
    LABELS,
    DPSAGEResult,
    SAGEResult,
    dpsage,
    real_sage,
)
from dpnotes.importance.ranking import (
    average_precision_at_k,
    jaccard_at_k,
    mean_average_precision,
    ndcg_at_k,
)
from dpnotes.importance.superquail import SuperQUAIL

__all__ = [
    "LABELS",
    "CodesClassifier",
    "DPLogisticRegression",
    "DPSAGEResult",
    "NonPrivateLogisticRegression",
    "SAGEResult",
    "SuperQUAIL",
    "average_precision_at_k",
    "dpsage",
    "encode_unit_norm",
    "jaccard_at_k",
    "mean_average_precision",
    "ndcg_at_k",
    "real_sage",
]
