"""pallas-legalize-mosaic: rewrite valid `pallas` kernels into forms Mosaic accepts.

`tl-to-pallas` writes each kernel in its plain form: an `arith` op on i8 tensors, a
`math.expm1`, a load with a lane stride. That is valid pallas (the verifier, the
reference interpreter and interpret mode take it) but Mosaic, the TPU kernel compiler,
rejects some of it. Each pattern here rewrites one such form into explicit pallas,
`arith` and `math` ops that compute the same values and that Mosaic lowers, so that
`emit-python` prints what it sees:

- `CompactStridedLanes`: no load or DMA strides lanes. A full-width load, a reshape
  to (..., n, k) and a `pallas.slice` of column s.
- `SliceLanesOfStridedLoad`: a strided load takes all of the ref's lanes. Load every
  lane, `pallas.slice` the ones used.
- `ExpandExpM1`: no expm1. `2t / (1 - t)` with `t = tanh(x / 2)` near 0, else
  `exp(x) - 1`.
- `ExpandIntegerArgReduce`: argmax/argmin of float32 only. Of integers: the extreme,
  then the first position holding it.
- `ExpandF16Rounding`: no conversion to float16 (v5e). Rounded on float32's bits.
- `ExpandSpecialFunction`: no asinh, acosh, atanh, erfc, erfcx, lgamma, digamma, zeta,
  i0e, i1e, ndtri, j0, j1, y0, y1, k0, k1, k0e, k1e or Airy's Ai. Each becomes its float32 expansion (`special_functions.py`:
  torch's Cephes algorithms, unrolled).
- `WidenI8Arith`: no 8-bit integer vector arithmetic. On i32, then narrowed.
- `WidenNarrowCompare`: compares only 32-bit integers. Both sides widened to i32.
- `WidenBeforeNarrowReshape`: no shape cast of packed (8- or 16-bit) data across the
  last two dims. Widen, then reshape the 32-bit value.
- `ReshapeBeforeNarrowing`: the same, for a value narrowed and then reshaped. Reshape
  the 32-bit value, then narrow.
- `WidenPackedSublaneRoll`: no rotation of packed (8- or 16-bit) data along sublanes
  ("unsupported packed type rotation"). Widen to 32 bits, roll, narrow.
- `WidenPackedSelectOnUnitSublanes`: no select of packed (8- or 16-bit) data of
  shape (..., 1, n) on a mask that varies along lanes ("Not implemented: Sublane
  broadcast"). Widen to 32 bits, select, narrow.
- `RollRank1AsRow`: no rotation of a rank-1 value ("Unsupported 1D shape"). Reshape to
  one row, roll its lanes, reshape back.

Patterns apply only inside `pallas.call` kernels (host code and XLA kernels are not
Mosaic's). The structure follows xDSL's `memref_stream_legalize` and MLIR's
`Math/Transforms/ExpandPatterns.cpp`: one pattern (one function) per expansion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    f16,
    f32,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.lowering.special_functions import EXPANSIONS, TileMath
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.tpu_rules import strided_lanes_readable


def _in_kernel(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, pallas.CallOp):
        parent = parent.parent_op()
    return parent is not None


def _replace(
    rewriter: PatternRewriter,
    op: Operation,
    new_ops: Sequence[Operation],
    result: SSAValue,
) -> None:
    """Put `new_ops` before `op` and let `result` stand for its one result. Only
    `result` takes the old name hint (xDSL's `replace` would give it to every new
    value), so the printed names of the other values stay what they were."""
    for new in new_ops:
        new.location = op.location
    rewriter.insert(new_ops, InsertPoint.before(op))
    old = op.results[0]
    result.name_hint = old.name_hint
    rewriter.replace_all_uses_with(old, result)
    rewriter.erase(op)


def _hinted(value: SSAValue, hint: str | None, suffix: str) -> SSAValue:
    """Name an intermediate value after the one it helps compute, so that it takes
    none of the printer's fallback names (`v_3`, ...) and the names of the values
    printed after it stay what they were."""
    value.name_hint = f"{hint}_{suffix}" if hint else suffix
    return value


def _full(shape: Sequence[int]) -> list[pallas.Indexer]:
    return [pallas.SliceAttr(0, n) for n in shape]


@dataclass(frozen=True)
class CompactStridedLanes(RewritePattern):
    """A load that keeps every k-th lane (`ds(s, n, stride = k)` on the last dim, over a
    ref exactly n * k lanes wide). No TPU load or DMA strides lanes: load the full
    width, reshape the lanes to (n, k) and keep column s, in registers.

    ```mlir
    %v = pallas.load %x_ref[ds(0, 64), ds(0, 128, stride = 2)] : !pallas.ref<64x256xf32, vmem> -> tensor<64x128xf32>
    // becomes
    %v_lanes = pallas.load %x_ref[:, :] : !pallas.ref<64x256xf32, vmem> -> tensor<64x256xf32>
    %v_pairs = pallas.reshape %v_lanes : tensor<64x256xf32> to tensor<64x128x2xf32>
    %v = pallas.slice %v_pairs[:, :, 0] : tensor<64x128x2xf32> -> tensor<64x128xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.LoadOp, rewriter: PatternRewriter) -> None:
        if not op.indexers.data:
            return
        last = op.indexers.data[-1]
        if not isinstance(last, pallas.SliceAttr) or last.stride.data == 1:
            return
        rtype, result = op.ref.type, op.result.type
        assert isinstance(rtype, pallas.RefType) and isinstance(result, TensorType)
        s, n, k = last.start.data, last.size.data, last.stride.data
        lead = op.indexers.data[:-1]
        if not strided_lanes_readable(s, n, k, rtype.get_shape()[-1]) or any(
            not isinstance(ix, pallas.SliceAttr) or ix.stride.data != 1 for ix in lead
        ):
            raise PassError(
                op,
                "pallas-legalize-mosaic: no TPU load strides lanes; a lane-strided load "
                "must span its ref's lanes, with unit strides on the other dims",
            )
        sizes = [ix.size.data for ix in lead]  # type: ignore[union-attr]
        elt = result.element_type
        hint = op.result.name_hint
        load = pallas.LoadOp(
            op.ref, TensorType(elt, [*sizes, n * k]), [*lead, pallas.SliceAttr(0, n * k)]
        )
        _hinted(load.result, hint, "lanes")
        pairs = pallas.ReshapeOp(load.result, TensorType(elt, [*sizes, n, k]))
        _hinted(pairs.result, hint, "pairs")
        pick = pallas.SliceOp(pairs.result, result, [*_full([*sizes, n]), IntAttr(s)])
        _replace(rewriter, op, [load, pairs, pick], pick.result)


@dataclass(frozen=True)
class SliceLanesOfStridedLoad(RewritePattern):
    """A load with a sublane stride and part of the lanes. Mosaic's strided load takes
    all of the ref's lanes (measured: "Index on last dim is not 0" for a lane slice at
    an offset, "The last dim size is not 128 in original base memref" for part of 256
    lanes): load them all, then slice the value's lanes in registers.

    ```mlir
    %v = pallas.load %r[ds(1, 32, stride = 2), ds(130, 1)] : !pallas.ref<64x256xf32, vmem> -> tensor<32x1xf32>
    // becomes
    %v_lanes = pallas.load %r[ds(1, 32, stride = 2), :] : !pallas.ref<64x256xf32, vmem> -> tensor<32x256xf32>
    %v = pallas.slice %v_lanes[:, ds(130, 1)] : tensor<32x256xf32> -> tensor<32x1xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.LoadOp, rewriter: PatternRewriter) -> None:
        if not op.indexers.data:
            return
        *lead, last = op.indexers.data
        rtype, result = op.ref.type, op.result.type
        assert isinstance(rtype, pallas.RefType) and isinstance(result, TensorType)
        lanes = rtype.get_shape()[-1]
        if (
            not any(
                isinstance(ix, pallas.SliceAttr) and ix.stride.data > 1 for ix in lead
            )
            or not isinstance(last, pallas.SliceAttr)
            or last.stride.data != 1
            or (last.start.data == 0 and last.size.data == lanes)
        ):
            return
        wide_shape = [*result.get_shape()[:-1], lanes]
        load = pallas.LoadOp(
            op.ref,
            TensorType(result.element_type, wide_shape),
            [*lead, pallas.SliceAttr(0, lanes)],  # type: ignore[list-item]
        )
        _hinted(load.result, op.result.name_hint, "lanes")
        pick = pallas.SliceOp(
            load.result,
            result,
            [*_full(wide_shape[:-1]), pallas.SliceAttr(last.start.data, last.size.data)],
        )
        _replace(rewriter, op, [load, pick], pick.result)


def _splat(value: float, t: TensorType) -> arith.ConstantOp:
    return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value]), t)


@dataclass(frozen=True)
class ExpandExpM1(RewritePattern):
    """Mosaic has no expm1. Near 0, `2t / (1 - t)` with `t = tanh(x / 2)` keeps the
    relative precision `exp(x) - 1` loses (measured: 3.8e-7 at most, as jnp.expm1);
    XLA cannot simplify it away, as it does log(exp(x)) in Kahan's formula.

    ```mlir
    %y = math.expm1 %x : tensor<8x128xf32>
    // becomes: t = tanh(x * 0.5); where(|x| < 1, 2 * t / (1 - t), exp(x) - 1)
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.ExpM1Op, rewriter: PatternRewriter) -> None:
        t = op.result.type
        if not isinstance(t, TensorType) or not _in_kernel(op):
            return
        x = op.operand
        half, one, two = _splat(0.5, t), _splat(1.0, t), _splat(2.0, t)
        halved = arith.MulfOp(x, half.result)
        tanh = math.TanhOp(halved.result)
        twice = arith.MulfOp(two.result, tanh.result)
        denominator = arith.SubfOp(one.result, tanh.result)
        near_zero_form = arith.DivfOp(twice.result, denominator.result)
        exp = math.ExpOp(x)
        far_form = arith.SubfOp(exp.result, one.result)
        magnitude = math.AbsFOp(x)
        near_zero = arith.CmpfOp(magnitude.result, one.result, "olt")
        pick = arith.SelectOp(near_zero.result, near_zero_form.result, far_form.result)
        new_ops: list[Operation] = [half, one, two, halved, tanh, twice, denominator]
        new_ops += [near_zero_form, exp, far_form, magnitude, near_zero]
        names = ["half", "one", "two", "halved", "t", "twice_t", "one_minus_t"]
        names += ["near_form", "exp", "far_form", "abs", "near"]
        hint = op.result.name_hint or "expm1"
        for new, suffix in zip(new_ops, names, strict=True):
            _hinted(new.results[0], hint, suffix)
        _replace(rewriter, op, [*new_ops, pick], pick.result)


@dataclass(frozen=True)
class ExpandSpecialFunction(RewritePattern):
    """Mosaic lowers none of the special functions of `special_functions.EXPANSIONS`
    (nor asinh, acosh, atanh): each is replaced by its expansion into `arith`, `math`
    and `pallas` ops Mosaic has, named after the op's result.

    ```mlir
    %y = math.asinh %x : tensor<8x128xf32>
    // becomes: a = |x|; copysign(where(a < 8192,
    //     log1p(a + a^2 / (1 + sqrt(1 + a^2))), log(a) + log(2)), x)
    ```
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        expand = EXPANSIONS.get(type(op))
        t = op.results[0].type if op.results else None
        if expand is None or not isinstance(t, TensorType) or not _in_kernel(op):
            return
        tiles = TileMath(t, op.results[0].name_hint or op.name.split(".")[-1])
        result = expand(tiles, *op.operands)
        _replace(rewriter, op, tiles.ops, result)


_8BIT_ARITH = (
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.DivSIOp,
    arith.RemSIOp,
    arith.MaxSIOp,
    arith.MinSIOp,
)


def _int_width(t: Attribute) -> int | None:
    if isinstance(t, TensorType) and isinstance(t.element_type, IntegerType):
        return t.element_type.width.data
    return None


@dataclass(frozen=True)
class WidenI8Arith(RewritePattern):
    """Mosaic has no 8-bit integer vector arithmetic: an i8 tile op runs on i32
    (sign-extended) and is narrowed back; the low 8 bits are what i8 wrapping gives.

    ```mlir
    %p = arith.muli %a, %b : tensor<32x256xi8>
    // becomes
    %0 = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
    %1 = pallas.convert %b : tensor<32x256xi8> to tensor<32x256xi32>
    %2 = arith.muli %0, %1 : tensor<32x256xi32>
    %p = pallas.convert %2 : tensor<32x256xi32> to tensor<32x256xi8>
    ```
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _8BIT_ARITH) or not _in_kernel(op):
            return
        t = op.result.type
        if _int_width(t) != 8:
            return
        assert isinstance(t, TensorType)
        wide = TensorType(i32, t.get_shape())
        widened = [pallas.ConvertOp(v, wide) for v in op.operands]
        wide_op = type(op)(*(w.result for w in widened), result_type=wide)  # type: ignore[call-arg]
        narrow = pallas.ConvertOp(wide_op.results[0], t)
        _replace(rewriter, op, [*widened, wide_op, narrow], narrow.result)


@dataclass(frozen=True)
class WidenNarrowCompare(RewritePattern):
    """Mosaic compares only 32-bit integers: widen 8- and 16-bit sides to i32 first.
    Sign extension keeps both the signed and the unsigned order, so every predicate
    means what it did. (i1 is left alone: widening would flip its signed order.)

    ```mlir
    %c = pallas.compare <slt> %a, %b : tensor<32x256xi8>
    // becomes
    %0 = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
    %1 = pallas.convert %b : tensor<32x256xi8> to tensor<32x256xi32>
    %c = pallas.compare <slt> %0, %1 : tensor<32x256xi32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.CompareOp, rewriter: PatternRewriter) -> None:
        t = op.lhs.type
        if _int_width(t) not in (8, 16):
            return
        assert isinstance(t, TensorType)
        wide = TensorType(i32, t.get_shape())
        lhs, rhs = pallas.ConvertOp(op.lhs, wide), pallas.ConvertOp(op.rhs, wide)
        compare = pallas.CompareOp(op.predicate.data, lhs.result, rhs.result)
        _replace(rewriter, op, [lhs, rhs, compare], compare.result)


_WIDENING = (arith.ExtFOp, arith.ExtSIOp, arith.ExtUIOp, arith.SIToFPOp, arith.UIToFPOp)


@dataclass(frozen=True)
class WidenBeforeNarrowReshape(RewritePattern):
    """In a kernel, a value of narrow (8- or 16-bit) data reshaped and then widened is
    widened first: Mosaic cannot shape-cast packed data across its last two dims
    (measured: `vector<16x16xbf16> -> vector<16x16x1xbf16>` fails "unsupported shape
    cast"), while the 32-bit reshape is the one f32 kernels already use.

    ```mlir
    %r = pallas.reshape %a : tensor<16x16xbf16> to tensor<16x16x1xbf16>
    %w = arith.extf %r : tensor<16x16x1xbf16> to tensor<16x16x1xf32>
    // becomes
    %0 = arith.extf %a : tensor<16x16xbf16> to tensor<16x16xf32>
    %1 = pallas.reshape %0 : tensor<16x16xf32> to tensor<16x16x1xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.ReshapeOp, rewriter: PatternRewriter) -> None:
        src, uses = op.source.type, list(op.result.uses)
        if (
            not isinstance(src, TensorType)
            or getattr(src.element_type, "bitwidth", 32) >= 32
            or not _in_kernel(op)
        ):
            return
        if len(uses) != 1 or not isinstance(widen := uses[0].operation, _WIDENING):
            return
        wide = widen.results[0].type
        assert isinstance(wide, TensorType)
        first = type(widen)(op.source, TensorType(wide.element_type, src.get_shape()))
        then = pallas.ReshapeOp(first.results[0], wide)
        first.location, then.location = widen.location, op.location
        rewriter.insert([first, then], InsertPoint.before(op))
        rewriter.replace_all_uses_with(widen.results[0], then.result)
        rewriter.erase(widen)
        rewriter.erase(op)


_NARROWING = (arith.TruncFOp, arith.TruncIOp)


@dataclass(frozen=True)
class ReshapeBeforeNarrowing(RewritePattern):
    """In a kernel, a value narrowed to 8- or 16-bit data and then reshaped is reshaped
    first, as 32-bit data, and narrowed after: the mirror of `WidenBeforeNarrowReshape`
    (measured: `vector<8xbf16> -> vector<8x1xbf16>` fails "unsupported shape cast"; a
    bf16 column stored from a row of f32 results).

    ```mlir
    %n = arith.truncf %v : tensor<8xf32> to tensor<8xbf16>
    %r = pallas.reshape %n : tensor<8xbf16> to tensor<8x1xbf16>
    // becomes
    %0 = pallas.reshape %v : tensor<8xf32> to tensor<8x1xf32>
    %1 = arith.truncf %0 : tensor<8x1xf32> to tensor<8x1xbf16>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.ReshapeOp, rewriter: PatternRewriter) -> None:
        out = op.result.type
        if (
            not isinstance(out, TensorType)
            or getattr(out.element_type, "bitwidth", 32) >= 32
            or not _in_kernel(op)
        ):
            return
        narrow = op.source.owner
        if not isinstance(narrow, _NARROWING) or len(list(narrow.result.uses)) != 1:
            return
        wide = narrow.input.type
        assert isinstance(wide, TensorType)
        first = pallas.ReshapeOp(
            narrow.input, TensorType(wide.element_type, out.get_shape())
        )
        then = type(narrow)(first.result, out)
        first.location, then.location = op.location, narrow.location
        rewriter.insert([first, then], InsertPoint.before(op))
        rewriter.replace_all_uses_with(op.result, then.result)
        rewriter.erase(op)
        rewriter.erase(narrow)


@dataclass(frozen=True)
class ExpandIntegerArgReduce(RewritePattern):
    """Mosaic's argmax and argmin take float32 only. Of integers: the max (or min)
    along the axis, then the smallest position holding it (the first, as jnp's and
    torch's argmax give).

    ```mlir
    %i = pallas.reduce <argmax> %v [1] : tensor<8x128xi32> -> tensor<8x1xi32>
    // becomes: m = max(v, 1); min(where(v == m, iota(1), 128), 1)
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.ReduceOp, rewriter: PatternRewriter) -> None:
        kind = op.kind.data
        src = op.source.type
        if not (kind.returns_index and _int_width(src) and _in_kernel(op)):
            return
        assert isinstance(src, TensorType)
        (axis,) = op.dims.get_values()
        extreme = ReductionKind.MAX if kind == ReductionKind.ARGMAX else ReductionKind.MIN
        best = pallas.ReduceOp(extreme, op.source, [axis])
        spread = pallas.BroadcastOp(best.result, src)
        holds = arith.CmpiOp(op.source, spread.result, "eq")
        zero = arith.ConstantOp(IntegerAttr(0, i32))
        position_type = TensorType(i32, src.get_shape())
        position = pallas.IotaOp(zero.result, axis, position_type)
        beyond = _splat(src.get_shape()[axis], position_type)
        candidate = arith.SelectOp(holds.result, position.result, beyond.result)
        first = pallas.ReduceOp(ReductionKind.MIN, candidate.result, [axis])
        new_ops: list[Operation] = [
            best,
            spread,
            holds,
            zero,
            position,
            beyond,
            candidate,
        ]
        hint = op.result.name_hint or kind.value
        names = ["best", "best_b", "holds", "zero", "pos", "beyond", "candidate"]
        for new, suffix in zip(new_ops, names, strict=True):
            _hinted(new.results[0], hint, suffix)
        _replace(rewriter, op, [*new_ops, first], first.result)


_F16_MAX_BITS = 0x477FE000
"""The float32 bits of 65504, float16's largest finite value."""
_F16_NORMAL_BITS = 0x38800000
"""The float32 bits of 2**-14, float16's smallest normal value."""


@dataclass(frozen=True)
class ExpandF16Rounding(RewritePattern):
    """Mosaic (v5e) cannot convert to float16: a value rounded to float16's precision
    and widened back (`extf(truncf(x : f32) : f16)`, how the frontend casts to float16)
    is computed on float32's bits. Normal values round their mantissa to 10 bits, to
    nearest even (`(a + 0xFFF + lsb) & ~0x1FFF`), and past 65504 become inf; below
    2**-14 the quantum is 2**-24: the mantissa is shifted to that unit and rounded to
    nearest even on the bits shifted out, x's sign kept; NaN stays NaN. Integer ops
    only, but for the last product by 2**-24 (exact): XLA may fold `(x + c) - c`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ExtFOp, rewriter: PatternRewriter) -> None:
        narrow = op.input.owner
        t = op.result.type
        if not (
            isinstance(narrow, arith.TruncFOp)
            and isinstance(t, TensorType)
            and t.element_type == f32
            and narrow.result.type.element_type == f16  # type: ignore[attr-defined]
            and _in_kernel(op)
        ):
            return
        x = narrow.input
        bits_type = TensorType(i32, t.get_shape())

        def bits(v: int) -> arith.ConstantOp:
            return _splat(v - (1 << 32) if v >= 1 << 31 else v, bits_type)

        ops: list[Operation] = []

        def add(new: Operation) -> SSAValue:
            ops.append(new)
            return new.results[0]

        b = add(arith.BitcastOp(x, bits_type))
        magnitude = add(arith.AndIOp(b, add(bits(0x7FFFFFFF))))
        sign = add(arith.AndIOp(b, add(bits(0x80000000))))
        lsb = add(
            arith.AndIOp(add(arith.ShRSIOp(magnitude, add(bits(13)))), add(bits(1)))
        )
        bias = add(arith.AddiOp(add(bits(0xFFF)), lsb))
        rounded = add(
            arith.AndIOp(add(arith.AddiOp(magnitude, bias)), add(bits(~0x1FFF)))
        )
        too_big = add(arith.CmpiOp(rounded, add(bits(_F16_MAX_BITS)), "sgt"))
        rounded = add(arith.SelectOp(too_big, add(bits(0x7F800000)), rounded))
        nan = add(arith.CmpiOp(magnitude, add(bits(0x7F800000)), "sgt"))
        rounded = add(arith.SelectOp(nan, magnitude, rounded))
        # Below 2**-14: the mantissa (with its implicit bit) shifted to units of
        # 2**-24, rounded to nearest even on the bits shifted out.
        exponent = add(arith.ShRSIOp(magnitude, add(bits(23))))
        shift = add(
            arith.MinSIOp(add(arith.SubiOp(add(bits(126)), exponent)), add(bits(30)))
        )
        mantissa = add(
            arith.OrIOp(
                add(arith.AndIOp(magnitude, add(bits(0x7FFFFF)))), add(bits(1 << 23))
            )
        )
        units = add(arith.ShRSIOp(mantissa, shift))
        rest = add(arith.SubiOp(mantissa, add(arith.ShLIOp(units, shift))))
        half = add(arith.ShRSIOp(add(arith.ShLIOp(add(bits(1)), shift)), add(bits(1))))
        above = add(arith.CmpiOp(rest, half, "sgt"))
        tie = add(arith.CmpiOp(rest, half, "eq"))
        odd = add(
            arith.CmpiOp(add(arith.AndIOp(units, add(bits(1)))), add(bits(1)), "eq")
        )
        up = add(arith.OrIOp(above, add(arith.AndIOp(tie, odd))))
        units = add(
            arith.AddiOp(units, add(arith.SelectOp(up, add(bits(1)), add(bits(0)))))
        )
        quantum = add(_splat(2.0**-24, t))
        tiny = add(arith.MulfOp(add(pallas.ConvertOp(units, t)), quantum))
        tiny_bits = add(arith.BitcastOp(tiny, bits_type))
        is_tiny = add(arith.CmpiOp(magnitude, add(bits(_F16_NORMAL_BITS)), "slt"))
        chosen = add(arith.SelectOp(is_tiny, tiny_bits, rounded))
        signed = add(arith.OrIOp(chosen, sign))
        result = arith.BitcastOp(signed, t)
        hint = op.result.name_hint or "f16"
        for k, new in enumerate(ops):
            _hinted(new.results[0], hint, f"r{k}")
        _replace(rewriter, op, [*ops, result], result.result)
        if not narrow.result.uses:
            rewriter.erase(narrow)


def _wide_type(t: TensorType) -> TensorType | None:
    """The 32-bit type of a packed (8- or 16-bit) tile: f32 for floats, i32 for
    integers; None for a tile that is not packed."""
    element = t.element_type
    if isinstance(element, IntegerType) and element.width.data in (8, 16):
        return TensorType(i32, t.get_shape())
    if isinstance(element, AnyFloat) and element.bitwidth < 32:
        return TensorType(f32, t.get_shape())
    return None


@dataclass(frozen=True)
class WidenPackedSublaneRoll(RewritePattern):
    """Mosaic rotates packed (8- or 16-bit) tiles along lanes and leading dims but not
    along sublanes: such a roll runs on the 32-bit value (f32 for floats, i32 for
    integers) and is narrowed back, which is exact.

    ```mlir
    %r = pallas.roll %v by 3 along 0 : tensor<24x128xbf16>
    // becomes
    %0 = pallas.convert %v : tensor<24x128xbf16> to tensor<24x128xf32>
    %1 = pallas.roll %0 by 3 along 0 : tensor<24x128xf32>
    %r = pallas.convert %1 : tensor<24x128xf32> to tensor<24x128xbf16>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.RollOp, rewriter: PatternRewriter) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        rank, dim = t.get_num_dims(), op.dim.value.data
        wide = _wide_type(t)
        if rank < 2 or dim != rank - 2 or wide is None:
            return
        widened = pallas.ConvertOp(op.source, wide)
        rolled = pallas.RollOp(widened.result, op.shift.value.data, dim)
        narrow = pallas.ConvertOp(rolled.result, t)
        _replace(rewriter, op, [widened, rolled, narrow], narrow.result)


@dataclass(frozen=True)
class WidenPackedSelectOnUnitSublanes(RewritePattern):
    """Mosaic selects packed (8- or 16-bit) tiles of rank 3 or more whose second-minor
    dim is 1 only on masks constant along lanes: a mask that varies along lanes (a
    ragged k part's, from an iota) fails with "Not implemented: Sublane broadcast"
    (v5e and v6e, broadcast or not). The select runs on the 32-bit values and is
    narrowed back, which is exact. (`tile` drops such unit dims where it can:
    `SqueezeUnitDims`.)

    ```mlir
    %r = pallas.select %m, %a, %b : tensor<16x1x384xi1>, tensor<16x1x384xbf16>
    // becomes
    %0 = pallas.convert %a : tensor<16x1x384xbf16> to tensor<16x1x384xf32>
    %1 = pallas.convert %b : tensor<16x1x384xbf16> to tensor<16x1x384xf32>
    %2 = pallas.select %m, %0, %1 : tensor<16x1x384xi1>, tensor<16x1x384xf32>
    %r = pallas.convert %2 : tensor<16x1x384xf32> to tensor<16x1x384xbf16>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.SelectOp, rewriter: PatternRewriter) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        wide = _wide_type(t)
        if wide is None or t.get_num_dims() < 3 or t.get_shape()[-2] != 1:
            return
        if not _in_kernel(op):
            return
        widened = [pallas.ConvertOp(v, wide) for v in (op.true_value, op.false_value)]
        chosen = pallas.SelectOp(op.cond, widened[0].result, widened[1].result)
        narrow = pallas.ConvertOp(chosen.result, t)
        _replace(rewriter, op, [*widened, chosen, narrow], narrow.result)


@dataclass(frozen=True)
class RollRank1AsRow(RewritePattern):
    """Mosaic rotates no rank-1 value: it is rolled as one row of lanes.

    ```mlir
    %r = pallas.roll %v by 3 along 0 : tensor<512xi32>
    // becomes
    %0 = pallas.reshape %v : tensor<512xi32> to tensor<1x512xi32>
    %1 = pallas.roll %0 by 3 along 1 : tensor<1x512xi32>
    %r = pallas.reshape %1 : tensor<1x512xi32> to tensor<512xi32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: pallas.RollOp, rewriter: PatternRewriter) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        if t.get_num_dims() != 1:
            return
        row = pallas.ReshapeOp(op.source, TensorType(t.element_type, [1, *t.get_shape()]))
        rolled = pallas.RollOp(row.result, op.shift.value.data, 1)
        back = pallas.ReshapeOp(rolled.result, t)
        _replace(rewriter, op, [row, rolled, back], back.result)


MOSAIC_PATTERNS: tuple[RewritePattern, ...] = (
    CompactStridedLanes(),
    SliceLanesOfStridedLoad(),
    ExpandExpM1(),
    ExpandIntegerArgReduce(),
    ExpandF16Rounding(),
    ExpandSpecialFunction(),
    WidenI8Arith(),
    WidenNarrowCompare(),
    WidenBeforeNarrowReshape(),
    ReshapeBeforeNarrowing(),
    WidenPackedSublaneRoll(),
    WidenPackedSelectOnUnitSublanes(),
    RollRank1AsRow(),
)


@dataclass(frozen=True)
class LegalizeMosaicPass(CheckedOptionsPass):
    """Rewrite every `pallas.call` kernel into forms Mosaic lowers (see the module's
    table). The values computed do not change; IR that is already legal is left as it
    was."""

    name = "pallas-legalize-mosaic"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(list(MOSAIC_PATTERNS), dce_enabled=False)
        ).rewrite_module(op)
