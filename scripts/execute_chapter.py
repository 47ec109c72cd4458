"""Execute one chapter (``book/**/<name>.md``) in a fresh kernel; report what it shows.

A development aid: faster than a book build when one chapter changed. It prints the
error of the first failing cell, or the number of ``image/png`` outputs and figures
(``{glue:figure}`` directives), and writes each image to ``--images`` for looking at.

Run: ``python scripts/execute_chapter.py book/foundations/dp_basics.md --images DIR``
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path

import jupytext
import nbclient


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", type=Path)
    parser.add_argument("--images", type=Path, default=None)
    parser.add_argument("--timeout", type=int, default=1200)
    args = parser.parse_args(argv)
    nb = jupytext.read(args.chapter)
    start = time.perf_counter()
    client = nbclient.NotebookClient(
        nb,
        timeout=args.timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(args.chapter.parent)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        print(f"{args.chapter}: a cell failed\n{error}", file=sys.stderr)
        return 1
    images = 0
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                images += 1
                if args.images:
                    args.images.mkdir(parents=True, exist_ok=True)
                    path = args.images / f"{args.chapter.stem}-{index:03d}-{images}.png"
                    path.write_bytes(base64.b64decode(data["image/png"]))
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                print(f"cell {index} wrote to stderr: {output['text'][:500]}")
    figures = args.chapter.read_text().count("{glue:figure}")
    took = time.perf_counter() - start
    print(
        f"{args.chapter}: {images} image/png outputs, {figures} figures, {took:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
