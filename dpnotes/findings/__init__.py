"""The book's findings: every claim, table row and headline number, from stored tables.

One module per paper part. Each function takes the tidy result tables an experiment
stores (``book/_results/<experiment>/<profile>/``) and returns typed values: a number,
a :class:`~dpnotes.findings.verdict.Verdict` (ours with its interval beside the
paper's value), a tally. Chapters call these functions, glue their values into the
text, plot and explain; they compute nothing a reader would cite. Plain
post-processing of released results: no privacy budget is spent here.

Modules:

* :mod:`dpnotes.findings.verdict`: the :class:`~dpnotes.findings.verdict.Verdict`
  type, paired comparisons over seeds and tallies (the sentences made from counts are
  :func:`dpnotes.report.verdict_counts_text` and :func:`dpnotes.report.count_of`).
* :mod:`dpnotes.findings.stratification`: stratified mean estimation
  (rosenblatt2024stratification, Sections 3-4).
* :mod:`dpnotes.findings.synthesis`: stratified synthetic data (the same paper,
  Section 5): stratified against unstratified, paired over seeds.
* :mod:`dpnotes.findings.synthesis_causes`: the causes of the gap to the authors'
  synthesis results, one setting at a time.
* :mod:`dpnotes.findings.dpsgdf`: DPSGD-F (xu2021removing), as its text describes it.
* :mod:`dpnotes.findings.dpsgdf_gaps`: the settings its text leaves out (the
  reference code's loop, the census encodings, Table 2's gradient norms).
* :mod:`dpnotes.findings.spending`: DPSAGE, SuperQUAIL and FSQ
  (rosenblatt2022spending).
* :mod:`dpnotes.findings.spending_checks`: what judges the spending paper's claims:
  frozen predictions, Table 1's motivating claims, controls for FSQ-FNR, its collapse,
  Table 2 under two nDCG definitions, aggregate fidelity.
* :mod:`dpnotes.findings.spending_beyond`: beyond the spending paper: New Mexico
  Employment, a capped threshold, AIM on the target's pairs, the authors' evaluation.
* :mod:`dpnotes.findings.foundations`: the foundations chapter's demonstrations (zCDP
  conversion, noise comparison, a mechanism's empirical audit).
"""

__all__: list[str] = []  # a namespace of modules: import them by name
