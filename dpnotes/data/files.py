"""Registry of the public data files, data-root resolution, integrity checks, downloads.

Every loader in :mod:`dpnotes.data` goes through :func:`ensure_file`: it finds the
file under the data root, checks its sha256 where the registry knows it, and only if
the file is missing (and the network is allowed) downloads the original. Downloads go
through `pooch <https://www.fatiando.org/pooch/>`_ (a registry of hashes checked on
arrival, retries, a temporary file moved into place, and unzipping of archives), with
this module's own transfer function underneath, which refuses HTTP errors, HTML error
pages saved in place of data, truncated bodies and payloads of the wrong kind. The
checked file is moved into place atomically with :func:`os.replace`, so a half-written
download never sits at the final path.

The data root is, in order: the ``root`` argument, the environment variable
``DPNOTES_DATA_DIR``, or a per-user cache folder (``$XDG_CACHE_HOME/dpnotes/data`` or
``~/.cache/dpnotes/data``). Setting ``DPNOTES_OFFLINE=1`` forbids any network access: a
missing file is then a :class:`DataNotFoundError` that names the file, where to get it
and ``DPNOTES_DATA_DIR``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pooch

__all__ = [
    "ENV_DATA_DIR",
    "ENV_OFFLINE",
    "KNOWN_FILES",
    "DataIntegrityError",
    "DataNotFoundError",
    "KnownFile",
    "data_root",
    "default_cache_dir",
    "ensure_file",
    "file_info",
    "file_sha256",
    "head_bytes",
    "is_offline",
    "lookup",
    "verify_sha256",
]

#: The environment variable that names the data root (see :func:`data_root`).
ENV_DATA_DIR = "DPNOTES_DATA_DIR"
#: The environment variable that, set to ``1`` or ``true``, forbids downloads.
ENV_OFFLINE = "DPNOTES_OFFLINE"

#: Seconds to wait for a server before giving up on a download.
DOWNLOAD_TIMEOUT = 60.0
#: Further attempts pooch makes at a URL whose download failed its hash check.
DOWNLOAD_RETRIES = 2
_CHUNK = 1 << 20
_USER_AGENT = "dpnotes-data-loader/0.1 (+https://github.com/dpnotes/dpnotes)"

# Leading bytes of the binary formats we download; an HTML error page never starts so.
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"


class DataNotFoundError(FileNotFoundError):
    """A data file is missing and could not be downloaded (offline, or it failed)."""


class DataIntegrityError(ValueError):
    """A data file exists but is not the expected one (wrong sha256, HTML, cut)."""


@dataclass(frozen=True)
class KnownFile:
    """Provenance record of one public data file, as laid out under the data root.

    Attributes:
        relpath: Path relative to the data root, with forward slashes.
        sha256: Hex sha256 of the file as distributed, or ``None`` when not pinned.
        urls: Download locations, tried in order. For a file distributed inside a zip
            archive (``archive_member`` set) these are the archive's URLs.
        source_page: Human-readable page that documents the data set.
        licence: Licence of the data as distributed.
        rows: Number of data records (not lines) in the file, if known.
        size: Size in bytes, if known (checked before hashing, which is cheaper).
        description: One-line description for the book's provenance table.
        citation: Bibtex key in ``book/references.bib``.
        archive_member: Name of the file inside the downloaded zip archive, if any.
        magic: Leading bytes the downloaded (or archived) payload must start with.
    """

    relpath: str
    sha256: str | None
    urls: tuple[str, ...]
    source_page: str
    licence: str
    rows: int | None
    size: int | None
    description: str
    citation: str
    archive_member: str | None = None
    magic: bytes | None = None


_ACS_PAGE = "https://www.census.gov/programs-surveys/acs/microdata/access.html"
_ACS_ZIP = (
    "https://www2.census.gov/programs-surveys/acs/data/pums/{year}/1-Year/csv_p{st}.zip"
)
_MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
_UCI_ADULT = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
_LEQUY_RAW = "https://raw.githubusercontent.com/tailequy/fairness_dataset/main/"


def _acs(
    state: str, code: str, sha: str, rows: int | None, size: int | None
) -> KnownFile:
    return KnownFile(
        relpath=f"acs/2018/1-Year/psam_p{code}.csv",
        sha256=sha,
        urls=(_ACS_ZIP.format(year=2018, st=state.lower()),),
        source_page=_ACS_PAGE,
        licence="US government work, public domain",
        rows=rows,
        size=size,
        description=(
            f"ACS PUMS 2018 1-Year person file, {state} (state {code}), 286 columns, "
            f"as distributed inside csv_p{state.lower()}.zip"
        ),
        citation="ding2021folktables",
        archive_member=f"psam_p{code}.csv",
        magic=ZIP_MAGIC,
    )


def _mnist(name: str, sha: str, rows: int, size: int, what: str) -> KnownFile:
    return KnownFile(
        relpath=f"mnist/{name}",
        sha256=sha,
        urls=tuple(m + name for m in _MNIST_MIRRORS),
        source_page="http://yann.lecun.com/exdb/mnist/",
        licence="CC BY-SA 3.0 (LeCun, Cortes)",
        rows=rows,
        size=size,
        description=f"MNIST {what}, the official gzip IDX file",
        citation="lecun1998mnist",
        magic=GZIP_MAGIC,
    )


_REGISTRY: dict[str, KnownFile] = {
    f.relpath: f
    for f in (
        _acs(
            "NM",
            "35",
            "89d0cda191700869daa53fc5265658610e584192be49ca8a42fd601f909385f3",
            19247,
            13442944,
        ),
        _acs(
            "WY",
            "56",
            "5a98dac3cad5341136738fad4560d25356b744009910e7de954de5cc81db5212",
            5740,
            4018071,
        ),
        _acs(
            "NY",
            "36",
            "f9bfd886b96182c4e7bde11386dd5e1c7ea2d6194ef8bb4ee6bfbb0023814a91",
            None,
            138176785,
        ),
        KnownFile(
            relpath="acs/extracts/ACSEmployment_NY_2018_sample20000.csv",
            sha256="99f635cdb9a372f0547ceb5bb81998ec0ef3be6b03d9ad2d633991ff7697ce91",
            urls=(
                "https://raw.githubusercontent.com/DataResponsibly/Virny/main/"
                "tests/files_for_tests/folk_employment_NY_2018.csv",
            ),
            source_page="https://github.com/DataResponsibly/Virny",
            licence="BSD-3-Clause (DataResponsibly/Virny test fixture)",
            rows=20000,
            size=722100,
            description=(
                "20,000-row uniform random subsample of the folktables ACSEmployment "
                "task, New York 2018 (16 features and ESR as 0/1; subsample seed "
                "unknown)"
            ),
            citation="ding2021folktables",
        ),
        _mnist(
            "train-images-idx3-ubyte.gz",
            "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
            60000,
            9912422,
            "training images",
        ),
        _mnist(
            "train-labels-idx1-ubyte.gz",
            "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
            60000,
            28881,
            "training labels",
        ),
        _mnist(
            "t10k-images-idx3-ubyte.gz",
            "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
            10000,
            1648877,
            "test images",
        ),
        _mnist(
            "t10k-labels-idx1-ubyte.gz",
            "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
            10000,
            4542,
            "test labels",
        ),
        KnownFile(
            relpath="adult/adult.data",
            sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            urls=(_UCI_ADULT + "adult.data",),
            source_page="https://archive.ics.uci.edu/dataset/2/adult",
            licence="CC BY 4.0 (UCI)",
            rows=32561,
            size=3974305,
            description="UCI Adult training file",
            citation="kohavi1996adult",
        ),
        KnownFile(
            relpath="adult/adult.test",
            sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            urls=(_UCI_ADULT + "adult.test",),
            source_page="https://archive.ics.uci.edu/dataset/2/adult",
            licence="CC BY 4.0 (UCI)",
            rows=16281,
            size=2003153,
            description=(
                "UCI Adult test file (first line '|1x3 Cross validator', labels end "
                "with a dot)"
            ),
            citation="kohavi1996adult",
        ),
        KnownFile(
            relpath="adult/adult.names",
            sha256="c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
            urls=(_UCI_ADULT + "adult.names",),
            source_page="https://archive.ics.uci.edu/dataset/2/adult",
            licence="CC BY 4.0 (UCI)",
            rows=None,
            size=5229,
            description="UCI Adult description",
            citation="kohavi1996adult",
        ),
        KnownFile(
            relpath="dutch/dutch_census_2001.arff",
            sha256="0e7e3f32668919c239db820f625815e1ea834c71402cdea595e03ef08c8616ef",
            urls=(_LEQUY_RAW + "Dutch_census/dutch_census_2001.arff",),
            source_page="https://github.com/tailequy/fairness_dataset",
            licence="as distributed with the survey's materials",
            rows=60420,
            size=2199278,
            description=(
                "Dutch census 2001 fairness benchmark: 12 attributes, sex {1,2}, "
                "label occupation {5_4_9, 2_1}"
            ),
            citation="lequy2022survey",
        ),
        KnownFile(
            relpath="dutch/dutch.csv",
            sha256="c0e1df7e2ca07fa84aa99b5565c7b782a381e2fab377648a6d920174d04ce090",
            urls=(_LEQUY_RAW + "experiments/data/dutch.csv",),
            source_page="https://github.com/tailequy/fairness_dataset",
            licence="as distributed with the survey's materials",
            rows=60420,
            size=2316287,
            description=(
                "the survey authors' cleaned CSV of the Dutch census (sex male/female, "
                "occupation 1 = 2_1, 0 = 5_4_9; CRLF line endings)"
            ),
            citation="lequy2022survey",
        ),
    )
}

#: Read-only view of the registry, keyed by path relative to the data root.
KNOWN_FILES: Mapping[str, KnownFile] = MappingProxyType(_REGISTRY)


def file_info(relpath: str) -> KnownFile:
    """Return the provenance record of a known data file.

    Args:
        relpath: Path relative to the data root, e.g. ``"adult/adult.data"``.

    Returns:
        The :class:`KnownFile` record.

    Raises:
        ValueError: If the path is not in the registry.

    Examples:
        >>> file_info("adult/adult.data").rows
        32561
    """
    key = str(relpath).replace("\\", "/")
    if key not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown data file {relpath!r}; known files: {known}.")
    return _REGISTRY[key]


def lookup(relpath: str) -> KnownFile | None:
    """Return the registry record of ``relpath``, or None for an unknown file."""
    return _REGISTRY.get(relpath)


# ----------------------------------------------------------------------------------
# Root resolution and environment switches
# ----------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """Return the per-user default data folder (``$XDG_CACHE_HOME/dpnotes/data``)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dpnotes" / "data"


def data_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the folder that holds the data files.

    Args:
        root: An explicit folder. When ``None``, ``$DPNOTES_DATA_DIR`` is used if set
            and non-empty, else the per-user cache folder (see
            :func:`default_cache_dir`).

    Returns:
        The folder as an absolute :class:`pathlib.Path` (it need not exist yet).

    Raises:
        TypeError: If ``root`` is not a string or path-like object.
        ValueError: If the resolved path exists but is not a directory.
    """
    if root is None:
        env = os.environ.get(ENV_DATA_DIR, "").strip()
        path = Path(env) if env else default_cache_dir()
    elif isinstance(root, (str, os.PathLike)):
        path = Path(root)
    else:
        raise TypeError(
            f"root must be a str or os.PathLike folder, got {type(root).__name__}. "
            f"Pass root=None to use ${ENV_DATA_DIR} or the user cache folder."
        )
    path = path.expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"the data root {path} exists but is not a folder. Point root= or "
            f"{ENV_DATA_DIR} at a folder laid out like <root>/mnist/, <root>/adult/."
        )
    return path


def is_offline() -> bool:
    """Return whether ``DPNOTES_OFFLINE`` forbids network access (``1``, ``true``)."""
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in {"1", "true", "yes", "on"}


# ----------------------------------------------------------------------------------
# Hashing and verification
# ----------------------------------------------------------------------------------

# (resolved path, size, mtime_ns) -> sha256 hex, so repeated loads do not rehash.
_HASH_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Return the hex sha256 digest of a file, read in 1 MiB chunks.

    The digest is cached in-process per (path, size, modification time), so asking
    again for an unchanged file (every experiment run records the sha256 of its data)
    does not re-read it.

    Args:
        path: The file.

    Returns:
        The lowercase hex digest (64 characters).

    Raises:
        FileNotFoundError: If the file does not exist.
    """
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASH_CACHE:
        digest = hashlib.sha256()
        with open(p, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
        _HASH_CACHE[key] = digest.hexdigest()
    return _HASH_CACHE[key]


def _cached_sha256(path: Path) -> str:
    return file_sha256(path)


def _where_to_get(info: KnownFile | None) -> str:
    if info is None or not info.urls:
        page = f" (see {info.source_page})" if info is not None else ""
        return f"get the original file{page}"
    member = f"the file {info.archive_member} inside " if info.archive_member else ""
    return f"download {member}{info.urls[0]} (documentation: {info.source_page})"


def verify_sha256(
    path: str | os.PathLike[str], expected: str, *, info: KnownFile | None = None
) -> None:
    """Check that a file has the expected sha256 (cached per path, size and mtime).

    Args:
        path: The file to check.
        expected: Expected lowercase hex digest.
        info: The file's registry record, used for a precise error message.

    Raises:
        DataIntegrityError: (a ``ValueError``) if the size or the digest differs.
    """
    p = Path(path)
    size = p.stat().st_size
    if info is not None and info.size is not None and size != info.size:
        actual = f"a size of {size:,} bytes instead of {info.size:,}"
    else:
        digest = _cached_sha256(p)
        if digest == expected.lower():
            return
        actual = f"sha256 {digest}"
    raise DataIntegrityError(
        f"data file {p} has {actual}, but dpnotes expects sha256 {expected}"
        + (f" ({info.size:,} bytes)" if info is not None and info.size else "")
        + ". It is corrupt, truncated or a different version: delete it and load again "
        f"to re-download it, or {_where_to_get(info)}."
    )


def head_bytes(path: str | os.PathLike[str], n: int = 2048) -> bytes:
    """Return the first ``n`` bytes of a file (to tell data from an error page)."""
    with open(path, "rb") as handle:
        return handle.read(n)


def looks_like_html(head: bytes) -> bool:
    """Return whether the first bytes of a file look like an HTML or XML error page."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return text.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")) or (
        b"<html" in text[:1024]
    )


def check_not_html(path: str | os.PathLike[str], expected: str) -> None:
    """Raise if the file is empty or an HTML page where ``expected`` data was wanted.

    Raises:
        DataIntegrityError: If the file is empty or starts like an HTML/XML page.
    """
    p = Path(path)
    head = head_bytes(p)
    if not head.strip():
        raise DataIntegrityError(
            f"data file {p} is empty, but it should be {expected}. Delete it and load "
            "again to re-download it."
        )
    if looks_like_html(head):
        raise DataIntegrityError(
            f"data file {p} is an HTML page (probably a server error or login page "
            f"saved by a failed download), but it should be {expected}. Delete it and "
            "load again, or download the original by hand."
        )


# ----------------------------------------------------------------------------------
# Downloading
# ----------------------------------------------------------------------------------

# The network entry point; tests replace it with a fake (never real network in tests).
_urlopen: Callable[..., Any] = urllib.request.urlopen


def _fetch(url: str, dest: Path, *, magic: bytes | None, timeout: float) -> None:
    """Stream ``url`` into ``dest`` and refuse error pages and truncated bodies."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    with _urlopen(request, timeout=timeout) as response:
        status = getattr(response, "status", None)
        if status is None:
            status = response.getcode()
        if status is not None and int(status) != 200:
            raise OSError(f"HTTP status {status}")
        headers = getattr(response, "headers", None) or {}
        content_type = str(headers.get("Content-Type", "") or "").lower()
        if "text/html" in content_type:
            raise OSError(f"the server sent an HTML page (Content-Type {content_type})")
        length = headers.get("Content-Length")
        written = 0
        with open(dest, "wb") as out:
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
    if length is not None and str(length).strip().isdigit() and written != int(length):
        raise OSError(f"truncated download: got {written:,} of {int(length):,} bytes")
    if written == 0:
        raise OSError("the server sent an empty body")
    head = head_bytes(dest)
    if looks_like_html(head):
        raise OSError("the server sent an HTML page instead of the data file")
    if magic is not None and not head.startswith(magic):
        raise OSError(
            f"the body does not start with the expected bytes {magic!r} "
            f"(got {head[:8]!r}): not the right kind of file"
        )


def _transfer(magic: bytes | None) -> Callable[..., bool | None]:
    """Return a pooch downloader that streams with :func:`_fetch` and its checks."""

    def download(
        url: str, output_file: Any, pup: Any = None, check_only: bool = False
    ) -> bool | None:
        if check_only:
            return True
        _fetch(url, Path(output_file), magic=magic, timeout=DOWNLOAD_TIMEOUT)
        return None

    return download


def _fetch_with_pooch(info: KnownFile, url: str, folder: Path) -> Path:
    """Download ``url`` into ``folder`` with pooch; return the (extracted) file.

    For a plain file pooch checks the registry's sha256 on arrival. For an archive
    the registry pins the member, not the archive, so the member is checked here.
    """
    fname = url.rsplit("/", 1)[-1] if info.archive_member else Path(info.relpath).name
    known = None
    if info.archive_member is None and info.sha256 is not None:
        known = f"sha256:{info.sha256}"
    pup = pooch.create(
        path=folder,
        base_url="",
        registry={fname: known},
        urls={fname: url},
        retry_if_failed=DOWNLOAD_RETRIES,
    )
    processor = None
    if info.archive_member is not None:
        processor = pooch.Unzip(members=[info.archive_member], extract_dir="members")
    try:
        got = pup.fetch(fname, processor=processor, downloader=_transfer(info.magic))
    except zipfile.BadZipFile as err:
        raise OSError(f"the downloaded archive is not a valid zip file: {err}") from err
    except ValueError as err:  # pooch: the hash does not match the registry
        raise OSError(f"the downloaded file failed verification: {err}") from err
    if isinstance(got, list):
        if not got:
            raise OSError(f"the archive has no member {info.archive_member!r}")
        got = got[0]
    final = Path(got)
    if info.archive_member is not None and info.sha256 is not None:
        try:
            verify_sha256(final, info.sha256, info=info)
        except DataIntegrityError as err:
            raise OSError(f"the downloaded file failed verification: {err}") from err
    return final


def _download(info: KnownFile, path: Path) -> None:
    """Download ``info`` to ``path`` atomically; raise OSError listing every failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    errors = []
    for url in info.urls:
        try:
            # A folder beside the target: the final os.replace stays on one disk,
            # and everything pooch wrote (archive included) goes with the folder.
            with tempfile.TemporaryDirectory(
                dir=path.parent, prefix=f".{path.name}.", suffix=".part"
            ) as folder:
                os.replace(_fetch_with_pooch(info, url, Path(folder)), path)
            return
        except (OSError, urllib.error.URLError, TimeoutError) as err:
            errors.append(f"{url}: {err}")
    raise OSError("; ".join(errors) if errors else "no download URL is known")


def _missing_message(info: KnownFile, path: Path, reason: str) -> str:
    return (
        f"data file {info.relpath!r} was not found at {path}. {reason} To fix: "
        f"{_where_to_get(info)}, and save it as <data root>/{info.relpath}; the data "
        f"root is the root= argument, else ${ENV_DATA_DIR} (e.g. "
        f"{ENV_DATA_DIR}=/path/to/data), else {default_cache_dir()}."
    )


def ensure_file(
    info: KnownFile,
    root: str | os.PathLike[str] | None = None,
    *,
    download: bool = True,
) -> Path:
    """Return the local path of a data file, downloading and verifying it if needed.

    Args:
        info: The file's registry record (see :data:`KNOWN_FILES`).
        root: The data root (see :func:`data_root`).
        download: Whether a missing file may be downloaded. ``DPNOTES_OFFLINE=1``
            overrides this to ``False``.

    Returns:
        The path of a present file whose sha256 (when known) matches.

    Raises:
        DataNotFoundError: If the file is missing and could not be downloaded.
        DataIntegrityError: If the file is present but its size or sha256 is wrong.
    """
    path = data_root(root) / info.relpath
    if not path.is_file():
        if is_offline() or not download:
            why = (
                f"No download was attempted because {ENV_OFFLINE} is set."
                if is_offline()
                else "Downloads are disabled for this call."
            )
            raise DataNotFoundError(_missing_message(info, path, why))
        try:
            _download(info, path)
        except OSError as err:
            raise DataNotFoundError(
                _missing_message(info, path, f"Downloading it failed ({err}).")
            ) from err
    if info.sha256 is not None:
        verify_sha256(path, info.sha256, info=info)
    return path
