"""The book's findings: every claim, table row and headline number, from stored tables.

One module per paper part. Each function takes the tidy result tables an experiment
stores (``book/_results/<experiment>/<profile>/``) and returns typed values: a number,
a :class:`~dpnotes.findings.verdict.Verdict` (ours with its interval beside the
paper's value), a tally. Chapters call these functions, glue their values into the
text, plot and explain; they compute nothing a reader would cite. Plain
post-processing of released results: no privacy budget is spent here.

Modules:

* :mod:`dpnotes.findings.verdict`: the :class:`Verdict` type, paired comparisons
  over seeds, tallies and the sentences made from counts.
* :mod:`dpnotes.findings.dpsgdf`: DPSGD-F (xu2021removing).
* :mod:`dpnotes.findings.spending`: DPSAGE, SuperQUAIL and FSQ
  (rosenblatt2022spending).
"""
