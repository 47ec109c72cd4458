"""Data loaders with provenance: folktables ACS, MNIST, Adult, Dutch, Gaussian mixtures.

Files live under a data root laid out like ``<root>/acs/2018/1-Year/psam_p35.csv``,
``<root>/mnist/*.gz``, ``<root>/adult/adult.data``, ``<root>/dutch/...``; the root is
the ``root=`` argument, else ``$DPNOTES_DATA_DIR``, else a per-user cache folder. Known
files are verified against their sha256 (:data:`KNOWN_FILES`); a missing file is
downloaded from its original source unless ``DPNOTES_OFFLINE=1``.
"""

from dpnotes.data._files import (
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
from dpnotes.data.employment import (
    EMPLOYMENT_COLUMNS,
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_SOURCES,
    employment_labels,
    encode_employment,
    load_employment,
)
from dpnotes.data.mnist import MNISTData, load_mnist, read_idx
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

__all__ = [
    "ACS_EXTRACTS",
    "ACS_STATES",
    "ACS_STATE_CODES",
    "ACS_TASKS",
    "ADULT_CATEGORICAL",
    "ADULT_COLUMNS",
    "ADULT_LABELS",
    "ADULT_NUMERIC",
    "DUTCH_COLUMNS",
    "EMPLOYMENT_COLUMNS",
    "EMPLOYMENT_DOMAIN",
    "EMPLOYMENT_SOURCES",
    "ENV_DATA_DIR",
    "ENV_OFFLINE",
    "KNOWN_FILES",
    "ACSTaskData",
    "DataIntegrityError",
    "DataNotFoundError",
    "GaussianMixtureSample",
    "KnownFile",
    "MNISTData",
    "acs_person_file",
    "data_root",
    "default_cache_dir",
    "employment_labels",
    "encode_employment",
    "ensure_file",
    "file_info",
    "file_sha256",
    "is_offline",
    "load_acs_extract",
    "load_acs_person",
    "load_acs_task",
    "load_adult",
    "load_dutch",
    "load_employment",
    "load_mnist",
    "read_arff",
    "read_idx",
    "sample_gaussian_mixture",
    "verify_sha256",
]
