"""``python -m dpnotes``: the command line of :mod:`dpnotes.lab.cli`."""

import sys

from dpnotes.lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
