"""PyTorch's OpInfo database (`torch.testing._internal.common_methods_invocations.op_db`)
run through `pallas_ir.compile` and compared with eager PyTorch. Used by
tests/test_opinfo.py (a bounded slice) and benchmarks/opinfo.py (every op). Needs
`expecttest` (the `test` extra), which torch's testing package imports.

One sample of an op becomes a program: `fn(*tensors)` calls `op.op(sample.input,
*sample.args, **sample.kwargs)`, every tensor of the sample (lists of tensors too) an
input, every other value a constant. `check_sample` compiles it with the `compile` it is
given (e.g. `pallas_ir.compile`), runs it, and classifies the sample (`STATUSES`);
of a passing sample that launches a pallas_call it keeps the emitted module and its
arguments' specs, for a deviceless TPU compile. `check_op` does that for an op's first
`n` samples, drawn deterministically (seeded); `sweep` runs ops in worker processes,
so that a crash or a hang costs one op, not the sweep. Each op has a family
(`family`) for the counts.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import multiprocessing
import random
import re
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.utils import _pytree as pytree

from pallas_ir.dialects.common import find_forward
from pallas_ir.dtypes import holds_float64, numpy_dtype
from pallas_ir.frontend.kernel_builder import UnsupportedError

STATUSES = ("pass", "unsupported", "wrong", "error", "timeout", "eager_error")
"""What a sample (and an op) comes to: `pass`, as eager; `unsupported`, an
UnsupportedError; `wrong`, a result (or a written input) unlike eager's, silently;
`error`, any other exception from pallas_ir; `timeout`, no result in the time allowed;
`eager_error`, eager itself raises: the sample is not counted."""

DTYPES = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "int32": torch.int32,
    "float64": torch.float64,
}

NONDETERMINISTIC = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "empty_permuted",
        "new_empty",
        "new_empty_strided",
        "randn",
        "randn_like",
        "rand_like",
        "randint",
        "randint_like",
        "bernoulli",
        "multinomial",
        "normal",
        "uniform",
        "cauchy",
        "exponential",
        "geometric",
        "log_normal",
        "nn.functional.dropout",
        "nn.functional.dropout2d",
        "nn.functional.dropout3d",
        "nn.functional.alpha_dropout",
        "nn.functional.feature_alpha_dropout",
        "nn.functional.rrelu",
        "nn.functional.fractional_max_pool2d",
        "nn.functional.fractional_max_pool3d",
        "svd_lowrank",
        "pca_lowrank",
        "torch.ops.aten._efficient_attention_forward",
        "torch.ops.aten._flash_attention_forward",
    }
)
"""Ops whose values eager leaves undefined (uninitialised memory) or draws at random:
only their results' shapes and dtypes are compared."""

FAMILIES = (
    "elementwise unary",
    "elementwise binary",
    "reduction",
    "scan",
    "matmul",
    "index read",
    "scatter/index write",
    "sort/select",
    "conv/pool",
    "linalg",
    "fft",
    "view/shape",
    "creation",
    "nn functional",
    "other",
)

_NAMES_OF_FAMILY: dict[str, str] = {
    "scan": (
        "cumsum cumprod cummax cummin logcumsumexp masked.cumsum masked.cumprod "
        "cumulative_trapezoid"
    ),
    "matmul": (
        "mm bmm addmm addmv addbmm baddbmm addr dot vdot mv matmul __rmatmul__ einsum "
        "outer inner tensordot kron linalg.multi_dot linalg.vecdot chain_matmul "
        "nn.functional.linear nn.functional.bilinear torch._scaled_mm "
        "torch._scaled_mm_v2 sparse.mm sparse.sampled_addmm"
    ),
    "index read": (
        "gather index_select take take_along_dim __getitem__ _unsafe_masked_index "
        "nn.functional.embedding nn.functional.embedding_bag masked_select nonzero "
        "nonzero_static argwhere nn.functional.one_hot"
    ),
    "scatter/index write": (
        "scatter scatter_add index_put index_copy index_add index_fill masked_scatter "
        "put slice_scatter select_scatter diagonal_scatter as_strided_scatter "
        "_unsafe_masked_index_put_accumulate"
    ),
    "sort/select": (
        "sort argsort msort topk kthvalue median nanmedian mode unique "
        "unique_consecutive searchsorted bucketize histc histogram histogramdd bincount "
        "quantile nanquantile masked.median isin"
    ),
    "linalg": (
        "cholesky cholesky_inverse cholesky_solve lu lu_solve lu_unpack qr svd geqrf "
        "ormqr triangular_solve pinverse matrix_exp logdet"
    ),
    "reduction": (
        "sum mean nanmean nansum prod amax amin argmax argmin any all std var var_mean "
        "std_mean logsumexp count_nonzero aminmax norm dist max.reduction_with_dim "
        "max.reduction_no_dim min.reduction_with_dim min.reduction_no_dim "
        "linalg.vector_norm linalg.norm linalg.matrix_norm _segment_reduce trace trapz "
        "trapezoid cov corrcoef renorm"
    ),
    "view/shape": (
        "view view_as reshape reshape_as permute transpose t T mT H mH expand expand_as "
        "expand_copy broadcast_to broadcast_tensors squeeze unsqueeze flatten unflatten "
        "ravel narrow narrow_copy select slice split split_with_sizes "
        "split_with_sizes_copy unsafe_split chunk unsafe_chunk tensor_split hsplit "
        "vsplit dsplit unbind unbind_copy movedim as_strided as_strided_copy diagonal "
        "diagonal_copy linalg.diagonal flip fliplr flipud roll rot90 repeat tile cat "
        "stack hstack vstack dstack column_stack _chunk_cat atleast_1d atleast_2d "
        "atleast_3d contiguous clone alias_copy view_copy permute_copy transpose_copy "
        "t_copy squeeze_copy unsqueeze_copy view_as_real view_as_complex real imag conj "
        "conj_physical resolve_conj resolve_neg block_diag diag diag_embed diagflat "
        "meshgrid tril triu repeat_interleave unfold unfold_copy resize_ resize_as_ "
        "sum_to_size broadcast_shapes combinations cartesian_prod unravel_index "
        "nn.functional.pixel_shuffle nn.functional.pixel_unshuffle "
        "nn.functional.channel_shuffle"
    ),
    "creation": (
        "arange linspace logspace zeros ones full eye empty empty_like empty_strided "
        "empty_permuted zeros_like ones_like full_like new_zeros new_ones new_full "
        "new_empty new_empty_strided scalar_tensor randn randn_like rand_like randint "
        "randint_like bernoulli multinomial normal uniform cauchy exponential geometric "
        "log_normal tril_indices triu_indices fill zero_"
    ),
    "elementwise binary": (
        "addcmul addcdiv lerp where clamp masked_fill polar complex nan_to_num isclose "
        "heaviside logaddexp2 masked.logaddexp"
    ),
    "nn functional": (
        "softmax log_softmax _softmax_backward_data native_layer_norm native_group_norm "
        "native_batch_norm _native_batch_norm_legit _batch_norm_with_update "
        "torch.ops.aten._safe_softmax.default cdist native_dropout_backward "
        "masked.softmax masked.log_softmax masked.softmin masked.normalize"
    ),
    "elementwise unary": "to",
}
"""OpInfo ops (by id or name) whose family their name does not tell."""

_FAMILY_OF_NAME = {n: f for f, names in _NAMES_OF_FAMILY.items() for n in names.split()}

_FAMILY_OF_PREFIX: tuple[tuple[str, str], ...] = (
    ("linalg.", "linalg"),
    ("fft.", "fft"),
    ("stft", "fft"),
    ("istft", "fft"),
    ("signal.windows.", "creation"),
    ("nn.functional.conv", "conv/pool"),
    ("nn.functional.pad", "conv/pool"),
    ("nn.functional.interpolate", "conv/pool"),
    ("nn.functional.upsample", "conv/pool"),
    ("_upsample", "conv/pool"),
    ("nn.functional.unfold", "conv/pool"),
    ("nn.functional.grid_sample", "conv/pool"),
    ("grid_sampler", "conv/pool"),
    ("constant_pad_nd", "conv/pool"),
    ("nn.functional.local_response_norm", "conv/pool"),
    ("index_reduce", "scatter/index write"),
    ("scatter_reduce", "scatter/index write"),
    ("masked.", "reduction"),
)


def family(ident: str) -> str:
    """The family of the OpInfo op `ident` (`name` or `name.variant`), by its id, its
    name and, for element-wise and reduction ops, by the kind of OpInfo PyTorch
    declares."""
    info = [_ops_by_id()[ident]] if ident in _ops_by_id() else find_ops(ident)
    name = info[0].name if info else ident
    for key in (ident, name):
        if key in _FAMILY_OF_NAME:
            return _FAMILY_OF_NAME[key]
    for prefix, fam in _FAMILY_OF_PREFIX:
        if name.startswith(prefix):
            return fam
    if "pool" in name:
        return "conv/pool"
    if info:
        from torch.testing._internal.opinfo.core import (
            BinaryUfuncInfo,
            ReductionOpInfo,
            UnaryUfuncInfo,
        )

        if isinstance(info[0], UnaryUfuncInfo):
            return "elementwise unary"
        if isinstance(info[0], BinaryUfuncInfo):
            return "elementwise binary"
        if isinstance(info[0], ReductionOpInfo):
            return "reduction"
    if name.startswith("nn.functional."):
        return "nn functional"
    if name.startswith("special."):
        return "elementwise unary"
    return "other"


def op_db() -> list:
    """PyTorch's OpInfo database (imported on first use: it takes seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db as db

    return db


def find_ops(name: str) -> list:
    """Every OpInfo of `name` (one per variant)."""
    return [o for o in op_db() if o.name == name]


def find_op(name: str, variant: str = ""):
    """The OpInfo of `name` and `variant_test_name` `variant`."""
    for o in op_db():
        if o.name == name and o.variant_test_name == variant:
            return o
    raise KeyError(f"no OpInfo {name!r} variant {variant!r}")


def op_id(op) -> str:
    """`name` or `name.variant`, as PyTorch's test names spell an OpInfo."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


@functools.cache
def _ops_by_id() -> dict[str, object]:
    return {op_id(o): o for o in op_db()}


def all_op_ids() -> list[str]:
    return list(_ops_by_id())


def op_by_id(ident: str):
    if ident not in _ops_by_id():
        raise KeyError(f"no OpInfo {ident!r}")
    return _ops_by_id()[ident]


def supports(op, dtype: torch.dtype) -> bool:
    return dtype in op.supported_dtypes("cpu")


def samples(op, dtype: torch.dtype, n: int, seed: int = 0) -> list:
    """The first `n` samples of `op` in `dtype`, the same in every process: torch's,
    numpy's and Python's generators are seeded first."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    return list(
        itertools.islice(
            op.sample_inputs(device="cpu", dtype=dtype, requires_grad=False), n
        )
    )


def _is_tensor(x: object) -> bool:
    return isinstance(x, torch.Tensor)


@dataclass
class Program:
    """A sample as a function of its tensors: `fn(*inputs)` calls the op on the
    sample's values, the tensors replaced by `fn`'s arguments."""

    fn: Callable
    inputs: list[torch.Tensor]


def values(sample) -> tuple:
    """A copy of the sample's `(input, args, kwargs)`: tensors with their strides,
    storage offsets and the storage they share (a sparse tensor cloned)."""
    triple = (sample.input, sample.args, sample.kwargs)
    try:
        return copy.deepcopy(triple)
    except (NotImplementedError, RuntimeError):  # sparse tensors have no storage
        return pytree.tree_map(lambda x: x.clone() if _is_tensor(x) else x, triple)


def program(op, sample) -> Program:
    """`op` on a copy of `sample`, every tensor of it (in lists too) an input of the
    program."""
    leaves, spec = pytree.tree_flatten(values(sample))
    where = [i for i, leaf in enumerate(leaves) if _is_tensor(leaf)]
    call = op.op

    def fn(*tensors):
        filled = list(leaves)
        for i, t in zip(where, tensors, strict=True):
            filled[i] = t
        inp, args, kwargs = pytree.tree_unflatten(filled, spec)
        return call(inp, *args, **kwargs)

    return Program(fn, [leaves[i] for i in where])


@dataclass
class SampleResult:
    status: str
    message: str = ""
    """The exception or the mismatch, a few lines."""
    key: str = ""
    """What makes two failures alike: for `unsupported`, the op named and the first
    words of the reason; for `error`, the exception type and first words."""
    missing: str = ""
    """The ATen op that has no lowering (`no lowering to ta yet`), else empty."""
    pallas: bool = False
    """The compiled program launches at least one `pl.pallas_call`."""
    computes: bool = True
    """The compiled program computes something (not: every result empty, or a view
    of an input), so it has kernels to launch."""
    seconds: float = 0.0
    description: str = ""
    """The sample: its inputs' shapes, dtypes, and its other arguments."""
    source: str = ""
    """A passing sample that launches a pallas_call: the emitted module, for a
    deviceless TPU compile (`pallas_ir.tpu_check.aot_compile_many`); else empty."""
    arg_specs: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    """With `source`: (shape, numpy dtype name) of each argument of its `forward`."""
    float64: bool = False
    """With `source`: the program computes on float64 values (compile with x64)."""


@dataclass
class OpResult:
    op: str
    """`name` or `name.variant`."""
    dtype: str
    family: str
    samples: list[SampleResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        """`wrong` if a sample is wrong, else `error`, `timeout`, `unsupported` in
        that order; `pass` when every counted sample passes; `eager_error` when eager
        rejects every sample (or there are none)."""
        counted = {s.status for s in self.samples} - {"eager_error"}
        for status in ("wrong", "error", "timeout", "unsupported", "pass"):
            if status in counted:
                return status
        return "eager_error"

    @property
    def pallas(self) -> bool:
        """Every passing sample that computes something launches a pallas_call."""
        passed = [s for s in self.samples if s.status == "pass"]
        return bool(passed) and all(s.pallas or not s.computes for s in passed)


class Hang(BaseException):
    """No result in the time allowed (a BaseException: pallas_ir's own `except
    Exception` must not swallow it)."""


def _normalise(text: str, words: int = 8) -> str:
    """The first line of `text`, numbers and the source location out, cut to its
    first `words` words: failures alike but for sizes share it."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = re.sub(r" \(at [^)]*\)$", "", first)
    first = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?\b", "N", first)
    return " ".join(first.split()[:words])


def _describe(value: object) -> str:
    if _is_tensor(value):
        dtype = str(value.dtype).removeprefix("torch.")
        if value.layout != torch.strided:  # sparse: no strides
            return f"{dtype}{list(value.shape)} {value.layout}"
        strides = "" if value.is_contiguous() else f" strides {tuple(value.stride())}"
        return f"{dtype}{list(value.shape)}{strides}"
    if isinstance(value, list | tuple):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def describe(sample) -> str:
    """The sample in one line: tensors as `dtype[shape]`, other values as they are."""
    args = ", ".join(
        [_describe(sample.input)]
        + [_describe(a) for a in sample.args]
        + [f"{k}={_describe(v)}" for k, v in sample.kwargs.items()]
    )
    return f"({args})"


TOLERANCES = {
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.float64: (1e-7, 1e-7),
}
"""rtol and atol of a floating result of that dtype; float32 1e-4 both, as the
fuzzer's; float64 OpInfo's 1e-7 (far below float32's precision: a value narrowed to
float32 fails); integers and bools exactly."""


def _close(got: object, want: object) -> str:
    """Empty when `got` is `want` (a tensor: dtype, shape and values to the dtype's
    tolerance, NaN where `want` has NaN; anything else: ==), else why not."""
    if not _is_tensor(want):
        if _is_tensor(got):
            return f"a tensor where eager returns {type(want).__name__} {want!r}"
        both_nan = isinstance(got, float) and isinstance(want, float)
        both_nan = both_nan and math.isnan(got) and math.isnan(want)
        return "" if got == want or both_nan else f"{got!r} != {want!r}"
    if not _is_tensor(got):
        return f"{type(got).__name__} where eager returns a tensor"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, eager's {want.dtype}"
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)}, eager's {tuple(want.shape)}"
    if want.is_complex() or want.is_floating_point():
        rtol, atol = TOLERANCES.get(want.dtype, (1e-4, 1e-4))
    else:
        rtol, atol = 0.0, 0.0
    try:
        torch.testing.assert_close(
            got, want, rtol=rtol, atol=atol, equal_nan=True, check_stride=False
        )
    except AssertionError as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return "; ".join(lines[:4])
    return ""


def _leaves(out: object) -> list:
    # A torch.return_types structseq and a tuple of the same values are alike.
    if isinstance(out, tuple | list):
        return [leaf for item in out for leaf in _leaves(item)]
    if isinstance(out, dict):
        return [leaf for k in sorted(out) for leaf in _leaves(out[k])]
    return [out]


def _mismatch(got: object, want: object, metadata_only: bool = False) -> str:
    """Empty when the output pytree `got` is `want` leaf by leaf, else the first leaf
    that differs and how."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return f"{len(got_leaves)} results, eager has {len(want_leaves)}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        if metadata_only and _is_tensor(g) and _is_tensor(w):
            g, w = g.new_zeros(g.shape), w.new_zeros(w.shape)
        why = _close(g, w)
        if why:
            where = f"result {i}" if len(want_leaves) > 1 else "result"
            return f"{where}: {why}"
    return ""


WIDER = {torch.float32: torch.float64, torch.bfloat16: torch.float32}
"""The precision eager is rerun in to tell its own rounding from a wrong answer."""


@dataclass
class WiderRun:
    """Eager on a sample's floating tensors widened (`WIDER`): what it returned and
    its inputs after the call."""

    results: object
    inputs: list[torch.Tensor]


def _wider_run(op, sample, dtype: torch.dtype) -> WiderRun | None:
    """Eager at the precision above `dtype` (float64 for float32; float32 for
    bfloat16, which pallas_ir computes in f32 and rounds where it stores, as Inductor
    does); None where there is none or that run fails."""
    wider = WIDER.get(dtype)
    if wider is None:
        return None
    run = program(op, sample)
    inputs = [t.to(wider) if t.is_floating_point() else t for t in run.inputs]
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = run.fn(*inputs)
    except Exception:  # noqa: BLE001 - no reference at that precision
        return None
    return WiderRun(results, inputs)


def _narrowed_like(value: object, like: object) -> list | None:
    """The leaves of `value`, each floating tensor cast to the dtype of `like`'s leaf
    in its place; None where the two have different leaf counts."""
    got, wanted = _leaves(value), _leaves(like)
    if len(got) != len(wanted):
        return None
    return [
        g.to(w.dtype) if _is_tensor(g) and _is_tensor(w) and g.is_floating_point() else g
        for g, w in zip(got, wanted, strict=True)
    ]


def _is_rounding(got: object, want: object, wider: object) -> bool:
    """`got` differs from eager's `want` by eager's own rounding: it matches `wider`
    (the same value from eager at a higher precision) cast back, or is no further
    from it than eager is."""
    reference = _narrowed_like(wider, want)
    if reference is None:
        return False
    return not _mismatch(got, reference) or _no_further_than_eager(got, want, reference)


def _no_further_than_eager(got: object, want: object, reference: object) -> bool:
    """Every floating result of `got` is as close to the wider-precision `reference`
    as eager's is (largest error; NaN where it has NaN) and every other result is
    eager's: eager's own float32 conditioning (`matrix_exp` of large entries), not a
    wrong answer."""
    leaves = _leaves(got), _leaves(want), _leaves(reference)
    if len({len(ls) for ls in leaves}) != 1:
        return False
    for g, w, r in zip(*leaves, strict=True):
        if not (_is_tensor(g) and _is_tensor(w) and _is_tensor(r)):
            if _close(g, w):
                return False
            continue
        if not w.is_floating_point() or g.shape != w.shape or g.dtype != w.dtype:
            if _close(g, w):
                return False
            continue
        g, w, r = g.double(), w.double(), r.double()
        if not torch.equal(g.isnan(), r.isnan()):
            return False
        if (
            g.numel()
            and (g - r).abs().nan_to_num().max() > (w - r).abs().nan_to_num().max()
        ):
            return False
    return True


def _classify_exception(e: BaseException) -> SampleResult:
    if isinstance(e, UnsupportedError):
        reason = _normalise(e.reason, 6)
        missing = str(e.op) if e.reason.startswith("no lowering to ta yet") else ""
        message = f"{e.op}: {e.reason}".splitlines()[0][:400]
        return SampleResult("unsupported", message, f"{e.op}: {reason}", missing)
    frames = traceback.extract_tb(e.__traceback__)
    inside = [f for f in frames if "pallas_ir" in f.filename]
    at = (
        f" (in {inside[-1].filename.split('pallas_ir/')[-1]}:{inside[-1].lineno})"
        if inside
        else ""
    )
    text = f"{type(e).__name__}: {str(e).strip()}"
    return SampleResult(
        "error",
        "\n".join(text.splitlines()[:3])[:600] + at,
        f"{type(e).__name__}: {_normalise(str(e), 8)}",
    )


def _forward_arg_specs(module) -> list[tuple[tuple[int, ...], str]]:
    """(shape, numpy dtype name) of each argument of the module's `forward`, as
    `pallas_ir.check.arg_specs` (a level above the frontend) gives them."""
    forward = find_forward(module)
    if forward is None:
        return []
    return [
        (tuple(int(d) for d in a.type.get_shape()), numpy_dtype(a.type.element_type).name)
        for a in forward.body.block.args
    ]


def check_sample(op, sample, dtype: torch.dtype, compile: Callable) -> SampleResult:
    """Compile `op` on `sample` with `compile(fn, example_inputs)`, run it, and
    compare with eager: results and the inputs after the call. Each of eager, the
    compile and the compiled call gets its own copy of the sample's tensors."""
    start = time.perf_counter()
    description = describe(sample)
    eager = program(op, sample)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = eager.fn(*eager.inputs)
    except Exception as e:  # noqa: BLE001 - eager rejects the sample: not counted
        return SampleResult(
            "eager_error", f"{type(e).__name__}: {str(e)[:200]}", description=description
        )
    examples = program(op, sample)
    run = program(op, sample)
    pallas, computes = False, True
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = compile(examples.fn, examples.inputs)
            source = getattr(compiled, "source", "")
            pallas = "pl.pallas_call(" in source
            computes = getattr(compiled, "computes", True)
            got = compiled(*run.inputs)
    except Hang:
        raise
    except Exception as e:  # noqa: BLE001 - classified, never lost
        result = _classify_exception(e)
        result.pallas, result.description = pallas, description
        result.seconds = time.perf_counter() - start
        return result
    metadata_only = op.name in NONDETERMINISTIC or _drops_out(op.name, sample)
    wider = functools.cache(lambda: _wider_run(op, sample, dtype))
    why = _mismatch(got, want, metadata_only)
    if why and not metadata_only and wider() and _is_rounding(got, want, wider().results):
        why = ""
    if why and _equal_ties(op.name, sample, got, want):
        why = ""
    if not why:  # an in-place random op (`x.normal_()`) writes its draws to an input
        for i, (g, w) in enumerate(zip(run.inputs, eager.inputs, strict=True)):
            if metadata_only:
                differs = _mismatch(g, w, metadata_only)
            else:  # a written input (batch norm's running stats) rounds as a result
                differs = _close(g, w)
                if differs and wider() and _is_rounding(g, w, wider().inputs[i]):
                    differs = ""
            if differs:
                why = f"input {i} after the call: {differs}"
                break
    result = SampleResult(
        "wrong" if why else "pass",
        why,
        _normalise(why, 6) if why else "",
        pallas=pallas,
        computes=computes,
        seconds=time.perf_counter() - start,
        description=description,
    )
    module = getattr(compiled, "module", None)
    if not why and pallas and module is not None:
        result.source = source
        result.arg_specs = _forward_arg_specs(module)
        result.float64 = holds_float64(module)
    return result


UNSTABLE_ORDER = {"sort": 0, "argsort": 0, "topk": 1}
"""Ops whose indices of equal values torch leaves unspecified (without `stable=True`),
with the position of their `dim` argument after the input. Eager's CPU order of ties
is not stable on large inputs; pallas_ir gives the stable order."""


def _equal_ties(name: str, sample, got: object, want: object) -> bool:
    """For an op of `UNSTABLE_ORDER`: `got` differs from `want` only in the order of
    equal values (its indices pick the values eager's pick, and any other result is
    eager's)."""
    at = UNSTABLE_ORDER.get(name)
    if at is None or sample.kwargs.get("stable"):
        return False
    x = sample.input
    dim = sample.args[at] if len(sample.args) > at else sample.kwargs.get("dim", -1)
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves) or not _is_tensor(x) or x.dim() == 0:
        return False
    for g, w in zip(got_leaves, want_leaves, strict=True):
        if _is_tensor(g) and _is_tensor(w) and w.dtype == torch.int64:
            if g.shape != w.shape or g.dtype != w.dtype:
                return False
            picked, wanted = x.gather(dim, g), x.gather(dim, w)
            if not torch.equal(picked.isnan(), wanted.isnan()):
                return False
            if not torch.equal(picked.nan_to_num(), wanted.nan_to_num()):
                return False
        elif _close(g, w):
            return False
    return True


def _drops_out(name: str, sample) -> bool:
    """Whether the sample of an attention op draws a dropout mask (its values are
    random, as those of the NONDETERMINISTIC ops)."""
    if name == "nn.functional.scaled_dot_product_attention":
        return float(sample.kwargs.get("dropout_p", 0.0)) > 0
    if name == "nn.functional.multi_head_attention_forward":
        # (query,) key, value, embed_dim, num_heads, in_proj_weight, in_proj_bias,
        # bias_k, bias_v, add_zero_attn, dropout_p, ...
        p = sample.args[9] if len(sample.args) > 9 else sample.kwargs.get("dropout_p", 0)
        return bool(sample.kwargs.get("training", True)) and float(p) > 0
    return False


def _raise_hang(signum, frame) -> None:
    raise Hang("no result in time")


def check_op(
    ident: str,
    dtype_name: str,
    n: int,
    compile: Callable,
    sample_timeout: float = 0,
    on_sample: Callable[[SampleResult], None] | None = None,
) -> OpResult:
    """The first `n` samples of the op `ident` (`name` or `name.variant`) in
    `dtype_name`, each checked (`check_sample`); with `sample_timeout` (seconds, on
    the main thread only), a sample that takes longer is a `timeout`."""
    op = op_by_id(ident)
    dtype = DTYPES[dtype_name]
    result = OpResult(ident, dtype_name, family(ident))
    try:
        drawn = samples(op, dtype, n)
    except Exception as e:  # noqa: BLE001 - PyTorch's sample generator failed
        drawn = []
        result.samples.append(
            SampleResult("eager_error", f"sample_inputs: {type(e).__name__}: {e}"[:300])
        )
    for sample in drawn:
        if sample_timeout:
            signal.signal(signal.SIGALRM, _raise_hang)
            signal.setitimer(signal.ITIMER_REAL, sample_timeout)
        start = time.perf_counter()
        try:
            r = check_sample(op, sample, dtype, compile)
        except Hang:
            r = SampleResult(
                "timeout",
                f"no result in {sample_timeout:g} s",
                "timeout",
                seconds=time.perf_counter() - start,
                description=describe(sample),
            )
        finally:
            if sample_timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
        result.samples.append(r)
        if on_sample:
            on_sample(r)
    return result


def work_items(ops: Iterable[str] | None, dtypes: Sequence[str]) -> list[tuple[str, str]]:
    """(op id, dtype) for every op of `ops` (ids; all of op_db when None) and every
    dtype of `dtypes` the op supports on the CPU."""
    chosen = all_op_ids() if ops is None else list(ops)
    return [
        (ident, d)
        for d in dtypes
        for ident in chosen
        if supports(op_by_id(ident), DTYPES[d])
    ]


def _worker(connection, compile: Callable, n: int, sample_timeout: float) -> None:
    """Checks the (op, dtype) pairs the parent sends, sending back each sample's
    result as it is known, then the op's."""
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    op_db()
    connection.send(("ready", None))
    while True:
        item = connection.recv()
        if item is None:
            return
        ident, dtype_name = item
        try:
            r = check_op(
                ident,
                dtype_name,
                n,
                compile,
                sample_timeout,
                lambda s: connection.send(("sample", s)),
            )
            connection.send(("op", r))
        except BaseException as e:  # noqa: BLE001 - the parent records it
            connection.send(("failed", f"{type(e).__name__}: {e}"[:600]))


@dataclass
class _Slot:
    process: multiprocessing.Process
    connection: object
    item: tuple[str, str] | None = None
    started: float = 0.0
    partial: list[SampleResult] = field(default_factory=list)
    done: int = 0


def sweep(
    items: Sequence[tuple[str, str]],
    compile: Callable,
    n: int = 3,
    jobs: int = 1,
    sample_timeout: float = 120,
    restart_every: int = 40,
) -> Iterator[OpResult]:
    """Check every (op id, dtype) of `items` in `jobs` worker processes (spawned:
    each imports torch and jax afresh), yielding each op's result as it finishes. A
    sample over `sample_timeout` seconds is a `timeout`; an op whose worker does not
    answer within its samples' time plus a minute is killed (`timeout` for the
    samples not done), one whose worker dies is an `error`. Workers are replaced
    after `restart_every` ops, which bounds their memory."""
    context = multiprocessing.get_context("spawn")
    pending = list(reversed(items))
    slots: list[_Slot] = []
    op_limit = n * sample_timeout + 60

    def start() -> _Slot:
        parent, child = context.Pipe()
        p = context.Process(
            target=_worker, args=(child, compile, n, sample_timeout), daemon=True
        )
        p.start()
        child.close()
        return _Slot(p, parent)

    def stop(slot: _Slot, kill: bool) -> None:
        if kill:
            slot.process.kill()
        else:
            try:
                slot.connection.send(None)
            except OSError:
                pass
        slot.process.join(10)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join()
        slot.connection.close()

    def assign(slot: _Slot) -> bool:
        if not pending:
            return False
        slot.item = pending.pop()
        slot.started = time.monotonic()
        slot.partial = []
        slot.connection.send(slot.item)
        return True

    def cut_short(slot: _Slot, status: str, message: str) -> OpResult:
        ident, dtype_name = slot.item
        r = OpResult(ident, dtype_name, family(ident), slot.partial)
        r.samples.append(SampleResult(status, message, message))
        return r

    for _ in range(min(jobs, len(items))):
        slots.append(start())
    try:
        while slots:
            for slot in list(slots):
                if slot.item is None and not assign(slot):
                    stop(slot, kill=False)
                    slots.remove(slot)
                    continue
                if slot.connection.poll(0.05):
                    try:
                        kind, payload = slot.connection.recv()
                    except (EOFError, OSError):
                        code = slot.process.exitcode
                        slot.process.join(5)
                        code = slot.process.exitcode if code is None else code
                        yield cut_short(slot, "error", f"worker died (exit {code})")
                        stop(slot, kill=True)
                        slots[slots.index(slot)] = start()
                        continue
                    if kind == "ready":
                        slot.started = time.monotonic()
                    elif kind == "sample":
                        slot.partial.append(payload)
                    elif kind in ("op", "failed"):
                        if kind == "op":
                            yield payload
                        else:
                            yield cut_short(slot, "error", payload)
                        slot.item = None
                        slot.done += 1
                        if slot.done >= restart_every:
                            stop(slot, kill=False)
                            slots[slots.index(slot)] = start()
                elif time.monotonic() - slot.started > op_limit + 30:
                    yield cut_short(slot, "timeout", f"op over {op_limit:g} s: killed")
                    stop(slot, kill=True)
                    slots[slots.index(slot)] = start()
    finally:
        for slot in slots:
            stop(slot, kill=True)
