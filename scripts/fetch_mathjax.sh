#!/usr/bin/env bash
# Fetch MathJax 3 from the npm registry so that the built book renders math offline.
#
# Usage: scripts/fetch_mathjax.sh DEST      (e.g. _build/.mathjax/mathjax)
#
# Extracts from the npm package `mathjax@3` what the combined component
# es5/tex-mml-chtml.js (Sphinx's default) and es5/tex-chtml.js need at run time,
# with es5/ flattened away (MathJax finds the rest relative to the loaded file):
#   DEST/tex-mml-chtml.js, DEST/tex-chtml.js   the combined components;
#   DEST/output/chtml/fonts/woff-v2/  the CHTML fonts, loaded by CSS;
#   DEST/input/tex/extensions/        TeX packages loaded on demand by autoload and
#                                     \require (e.g. \color, \cancel, \ce);
#   DEST/ui/, DEST/a11y/, DEST/sre/   loaded when a reader turns on accessibility
#                                     options in the right-click menu.
# Idempotent: does nothing when DEST already holds a complete copy.
# Without npm (or without the registry) it warns and exits 0: the book then falls
# back to the CDN default.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 DEST   (e.g. _build/.mathjax/mathjax)" >&2
    exit 2
fi
dest=$1
spec=${MATHJAX_NPM_SPEC:-mathjax@3}
stamp="$dest/.complete"

if [[ -f "$stamp" && -f "$dest/tex-mml-chtml.js" ]]; then
    echo "fetch_mathjax: $(cat "$stamp") already in $dest"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "fetch_mathjax: WARNING: npm not found; the book will load MathJax from" \
        "the CDN (math does not render offline)." >&2
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! tarball=$(cd "$tmp" && npm pack --silent --fetch-retries=1 --fetch-timeout=30000 \
    "$spec" 2>"$tmp/npm.log" | tail -n 1) \
    || [[ -z "$tarball" || ! -f "$tmp/$tarball" ]]; then
    echo "fetch_mathjax: WARNING: 'npm pack $spec' failed; the book will load" \
        "MathJax from the CDN (math does not render offline)." >&2
    sed 's/^/    /' "$tmp/npm.log" >&2 || true
    exit 0
fi

members=(
    package/LICENSE
    package/package.json
    package/es5/tex-mml-chtml.js
    package/es5/tex-chtml.js
    package/es5/output/chtml/fonts/woff-v2
    package/es5/input/tex/extensions
    package/es5/ui
    package/es5/a11y
    package/es5/sre
)
if ! tar -xzf "$tmp/$tarball" -C "$tmp" "${members[@]}" 2>"$tmp/tar.log"; then
    echo "fetch_mathjax: WARNING: $tarball lacks the expected files; the book will" \
        "load MathJax from the CDN." >&2
    sed 's/^/    /' "$tmp/tar.log" >&2
    exit 0
fi

version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json" | head -n 1)
mv "$tmp/package/LICENSE" "$tmp/package/package.json" "$tmp/package/es5/"
# Replace DEST atomically enough for a build folder: stage next to it, then move.
mkdir -p "$(dirname "$dest")"
rm -rf "$dest.partial" "$dest"
mv "$tmp/package/es5" "$dest.partial"
echo "mathjax $version" >"$dest.partial/.complete"
mv "$dest.partial" "$dest"
echo "fetch_mathjax: mathjax $version -> $dest ($(du -sh "$dest" | cut -f1))"
