"""The library functions: whole-array operations with no Pallas idiom yet, run by XLA.

An ATen op such as `sort`, a convolution or a matrix inverse is not a loop of scalar
ops: the frontend lowers it to a `ta.library_call` of one of these functions, in a
`ta.kernel` that runs on XLA, inside the same jitted `forward` as the Pallas kernels.
Each function is a plain jax function of whole arrays (`functions.py` and the family
modules beside it); emit-python copies the source of each one a module calls into the
module, and the reference interpreters run the same function on numpy arrays. This
module only names them (no jax import): the dialects hold a `LibraryFn` as an enum
attribute.

A call passes its operands in the shapes the op's `shapes` give (the buffers are
flat), and keyword parameters from its `params`; the function returns a tuple of
arrays, one per output, which the call casts to its outputs' element types.
"""

from __future__ import annotations

from xdsl.utils.str_enum import StrEnum


class LibraryFn(StrEnum):
    """A library function (see `functions.FUNCTIONS` for what each computes)."""

    # sorting and selection
    SORT = "sort"
    TOPK = "topk"

    # random numbers
    UNIFORM = "uniform"
    NORMAL = "normal"
    RANDINT = "randint"
    RANDPERM = "randperm"
    MULTINOMIAL = "multinomial"
    # convolution, pooling and resampling
    CONVOLUTION = "convolution"
    CONVOLUTION_BACKWARD = "convolution_backward"
    MAX_POOL = "max_pool"
    ADAPTIVE_MAX_POOL = "adaptive_max_pool"
    MAX_POOL_BACKWARD = "max_pool_backward"
    AVG_POOL = "avg_pool"
    AVG_POOL_BACKWARD = "avg_pool_backward"
    ADAPTIVE_AVG_POOL = "adaptive_avg_pool"
    ADAPTIVE_AVG_POOL_BACKWARD = "adaptive_avg_pool_backward"
    UPSAMPLE_LINEAR = "upsample_linear"
    UPSAMPLE_BICUBIC = "upsample_bicubic"
    UPSAMPLE_BILINEAR_AA = "upsample_bilinear_aa"
    GRID_SAMPLE = "grid_sample"
    # linear algebra
    LU_FACTOR = "lu_factor"
    LU = "lu"
    LU_UNPACK = "lu_unpack"
    LU_SOLVE = "lu_solve"
    SOLVE = "solve"
    INV = "inv"
    CHOLESKY = "cholesky"
    CHOLESKY_SOLVE = "cholesky_solve"
    CHOLESKY_INVERSE = "cholesky_inverse"
    QR = "qr"
    SVD = "svd"
    EIGH = "eigh"
    TRIANGULAR_SOLVE = "triangular_solve"
    DET = "det"
    SLOGDET = "slogdet"
    PINV = "pinv"
    LSTSQ = "lstsq"
    MATRIX_EXP = "matrix_exp"
    HOUSEHOLDER_PRODUCT = "householder_product"
    GEQRF = "geqrf"
    ORMQR = "ormqr"

    # losses
    CTC_LOSS = "ctc_loss"

    # indexing
    EMBEDDING_BAG = "embedding_bag"
    EMBEDDING_BAG_BACKWARD = "embedding_bag_backward"
    NONZERO_STATIC = "nonzero_static"
    SEGMENT_REDUCE = "segment_reduce"

    # fft
    FFT_R2C = "fft_r2c"
    FFT_C2C = "fft_c2c"
    FFT_C2R = "fft_c2r"
    KTHVALUE = "kthvalue"
    MEDIAN = "median"
    MODE = "mode"
    SEARCHSORTED = "searchsorted"
    HISTC = "histc"
    HISTOGRAM_BIN_EDGES = "histogram_bin_edges"
    HISTOGRAMDD = "histogramdd"
    # scans
    CUMSUM = "cumsum"
    CUMPROD = "cumprod"
    CUMEXTREME = "cumextreme"
    LOGCUMSUMEXP = "logcumsumexp"
    # special functions
    ORTHOGONAL_POLYNOMIAL = "orthogonal_polynomial"


NOT_IN_FLOAT64: dict[LibraryFn, str] = dict.fromkeys(
    [
        LibraryFn.LU_FACTOR,
        LibraryFn.LU,
        LibraryFn.SOLVE,
        LibraryFn.INV,
        LibraryFn.DET,
        LibraryFn.SLOGDET,
        LibraryFn.MATRIX_EXP,
    ],
    "XLA on TPU has no float64 LU decomposition (only float32 and complex64)",
)
"""The functions a TPU cannot run on float64 data (why): a call of one on float64 is
an UnsupportedError, never a narrowed one."""
