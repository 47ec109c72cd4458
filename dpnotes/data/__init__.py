"""Data loaders with provenance: folktables ACS, MNIST, Adult, Dutch, Gaussian mixtures.

The model-ready encodings of the DPSGD-F data sets have one module each:
:mod:`dpnotes.data.adult`, :mod:`dpnotes.data.dutch` and
:mod:`dpnotes.data.unbalanced_mnist`; :mod:`dpnotes.data.dpsgdf` loads them by name
(:func:`load_grouped_split`). What the census sets' encodings share is in
:mod:`dpnotes.data.blocks`; the split they are returned as (:class:`GroupedSplit`) and
the one random holdout split (:func:`holdout_split`) are in :mod:`dpnotes.data.splits`.

Files live under a data root laid out like ``<root>/acs/2018/1-Year/psam_p35.csv``,
``<root>/mnist/*.gz``, ``<root>/adult/adult.data``, ``<root>/dutch/...``; the root is
the ``root=`` argument, else ``$DPNOTES_DATA_DIR``, else a per-user cache folder. Known
files are verified against their sha256 (:data:`KNOWN_FILES`); a missing file is
downloaded from its original source unless ``DPNOTES_OFFLINE=1``.
"""

from dpnotes.data.acs import (
    ACS_EXTRACTS,
    ACS_STATE_CODES,
    ACS_STATES,
    ACS_TASKS,
    ACSTaskData,
    acs_person_file,
    load_acs_extract,
    load_acs_person,
    load_acs_task,
)
from dpnotes.data.adult import (
    ADULT_DOMAIN,
    ADULT_NUMERIC_BOUNDS,
    encode_adult,
    load_adult_split,
)
from dpnotes.data.dpsgdf import DPSGD_DATASETS, load_grouped_split
from dpnotes.data.dutch import DUTCH_DOMAIN, encode_dutch, load_dutch_split
from dpnotes.data.employment import (
    EMPLOYMENT_COLUMNS,
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_FILES,
    EMPLOYMENT_GROUPINGS,
    EMPLOYMENT_LABEL,
    EMPLOYMENT_SOURCES,
    employment_labels,
    encode_employment,
    load_employment,
    split_employment,
)
from dpnotes.data.files import (
    ENV_DATA_DIR,
    ENV_OFFLINE,
    KNOWN_FILES,
    DataIntegrityError,
    DataNotFoundError,
    KnownFile,
    data_root,
    default_cache_dir,
    ensure_file,
    file_info,
    file_sha256,
    is_offline,
    verify_sha256,
)
from dpnotes.data.mnist import MNISTData, load_mnist, read_idx
from dpnotes.data.splits import GroupedSplit, holdout_split
from dpnotes.data.synthetic import GaussianMixtureSample, sample_gaussian_mixture
from dpnotes.data.tabular import (
    ADULT_CATEGORICAL,
    ADULT_COLUMNS,
    ADULT_LABELS,
    ADULT_NUMERIC,
    DUTCH_COLUMNS,
    load_adult,
    load_dutch,
    read_arff,
)
from dpnotes.data.unbalanced_mnist import (
    MNIST_MINORITY_CLASS,
    MNIST_MINORITY_SIZE,
    load_unbalanced_mnist,
    unbalanced_indices,
)

__all__ = [
    "ACS_EXTRACTS",
    "ACS_STATES",
    "ACS_STATE_CODES",
    "ACS_TASKS",
    "ADULT_CATEGORICAL",
    "ADULT_COLUMNS",
    "ADULT_DOMAIN",
    "ADULT_LABELS",
    "ADULT_NUMERIC",
    "ADULT_NUMERIC_BOUNDS",
    "DPSGD_DATASETS",
    "DUTCH_COLUMNS",
    "DUTCH_DOMAIN",
    "EMPLOYMENT_COLUMNS",
    "EMPLOYMENT_DOMAIN",
    "EMPLOYMENT_FILES",
    "EMPLOYMENT_GROUPINGS",
    "EMPLOYMENT_LABEL",
    "EMPLOYMENT_SOURCES",
    "ENV_DATA_DIR",
    "ENV_OFFLINE",
    "KNOWN_FILES",
    "MNIST_MINORITY_CLASS",
    "MNIST_MINORITY_SIZE",
    "ACSTaskData",
    "DataIntegrityError",
    "DataNotFoundError",
    "GaussianMixtureSample",
    "GroupedSplit",
    "KnownFile",
    "MNISTData",
    "acs_person_file",
    "data_root",
    "default_cache_dir",
    "employment_labels",
    "encode_adult",
    "encode_dutch",
    "encode_employment",
    "ensure_file",
    "file_info",
    "file_sha256",
    "holdout_split",
    "is_offline",
    "load_acs_extract",
    "load_acs_person",
    "load_acs_task",
    "load_adult",
    "load_adult_split",
    "load_dutch",
    "load_dutch_split",
    "load_employment",
    "load_grouped_split",
    "load_mnist",
    "load_unbalanced_mnist",
    "read_arff",
    "read_idx",
    "sample_gaussian_mixture",
    "split_employment",
    "unbalanced_indices",
    "verify_sha256",
]
