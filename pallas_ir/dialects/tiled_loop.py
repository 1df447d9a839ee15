"""The `tl` (tiled_loop) dialect: a grid of tiles at element offsets, target-neutral.

`tile` lowers a `ta.kernel` to a `tl.kernel` holding one `tl.grid`: each grid point
loads tiles (`tensor` values) at element offsets that are affine in the grid indices
and in prefetched scalars, computes on whole tiles (`arith`/`math` on tensors,
`tl.broadcast`, `tl.transpose`, `tl.reduce`) and stores tiles back. Grid dims are
`parallel` (independent points) or `sequential` (points run in order, so a tile can
carry a value, such as a partial reduction, from one point to the next).
`tl-to-pallas` then turns element offsets into Pallas block indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.ir.affine import AffineDimExpr, AffineExpr
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    HasParent,
    IsTerminator,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pallas_ir.affine_analysis import linearize
from pallas_ir.dialects.common import (
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    BroadcastOpBase,
    CompareOpBase,
    ConvertOpBase,
    DotOpBase,
    IotaOpBase,
    KernelOpBase,
    ReduceTileOpBase,
    ReductionKind,
    ReshapeHasCanonicalizationPatterns,
    ReshapeOpBase,
    RollOpBase,
    SelectOpBase,
    TransposeHasCanonicalizationPatterns,
    TransposeOpBase,
    loop_bounds_of,
    map_bounds,
    parse_access,
    parse_optional_attributes_keyword,
    print_access,
    print_optional_attributes_keyword,
    resolve_indices,
    verify_map_arity,
    verify_reduction_kind,
)
from pallas_ir.dialects.enums import (
    TlArgRoleAttr,
    TlComparePredicateAttr,
    TlDotPrecisionAttr,
    TlReductionKindAttr,
)


class GridSemantics(StrEnum):
    PARALLEL = "parallel"
    SEQUENTIAL = "sequential"


@irdl_attr_definition
class GridSemanticsAttr(EnumAttribute[GridSemantics], SpacedOpaqueSyntaxAttribute):
    """`#tl<grid_semantics parallel>` or `sequential`."""

    name = "tl.grid_semantics"


@irdl_op_definition
class KernelOp(KernelOpBase):
    """A tiled kernel: buffer arguments with roles and one `tl.grid`.

    ```mlir
    tl.kernel @add(%x: memref<512x1024xf32> {role = "in"},
                   %o: memref<512x1024xf32> {role = "out"}) {
      tl.grid [4, 2] (parallel, parallel) (%i, %j) { ... }
    }
    ```
    """

    name = "tl.kernel"

    def verify_(self) -> None:
        super().verify_()
        grids = [op for op in self.body.block.ops if isinstance(op, GridOp)]
        others = [op.name for op in self.body.block.ops if not isinstance(op, GridOp)]
        if len(grids) != 1 or others:
            raise VerifyException(
                f"a tl.kernel holds exactly one tl.grid, found {len(grids)}"
                + (f" and {', '.join(others)}" if others else "")
            )


@irdl_op_definition
class GridOp(IRDLOperation):
    """The grid of tile indices; the body runs once per grid point.

    ```mlir
    tl.grid [4, 2] (parallel, sequential) (%i, %j) { ... }
    ```
    """

    name = "tl.grid"

    shape = prop_def(DenseArrayBase[I64])
    semantics = prop_def(ArrayAttr[GridSemanticsAttr])
    body = region_def("single_block")

    traits = traits_def(HasParent(KernelOp), NoTerminator())

    def __init__(
        self,
        shape: Sequence[int],
        semantics: Sequence[GridSemantics | str],
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * len(shape)))
        super().__init__(
            properties={
                "shape": DenseArrayBase.from_list(i64, shape),
                "semantics": ArrayAttr(
                    [GridSemanticsAttr(GridSemantics(s)) for s in semantics]
                ),
            },
            regions=[body],
        )

    @property
    def extents(self) -> tuple[int, ...]:
        return self.shape.get_values()

    @classmethod
    def parse(cls, parser: Parser) -> GridOp:
        shape = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        semantics = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_str_enum(GridSemantics)
        )
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        attrs = parse_optional_attributes_keyword(parser)
        body = parser.parse_region([iv.resolve(IndexType()) for iv in ivs])
        op = cls(shape, semantics, body)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        printer.print_list(self.extents, lambda n: printer.print_string(str(n)))
        printer.print_string("] (")
        printer.print_list(
            self.semantics.data, lambda s: printer.print_string(s.data.value)
        )
        printer.print_string(") (")
        printer.print_list(self.body.block.args, printer.print_operand)
        printer.print_string(")")
        print_optional_attributes_keyword(printer, dict(self.attributes))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        extents = self.extents
        if len(self.semantics.data) != len(extents):
            raise VerifyException(
                f"grid has {len(extents)} dims but {len(self.semantics.data)} semantics"
            )
        if any(n <= 0 for n in extents):
            raise VerifyException("grid extents must be positive")
        if len(self.body.block.args) != len(extents):
            raise VerifyException(
                f"grid has {len(extents)} dims but {len(self.body.block.args)} indices"
            )


def _grid_extent(value: SSAValue) -> int | None:
    if isinstance(value, BlockArgument) and isinstance(
        grid := value.block.parent_op(), GridOp
    ):
        return grid.extents[value.index]
    return None


def _kernel_arg(buffer: SSAValue, allowed: frozenset[ArgRole], what: str) -> None:
    if not isinstance(buffer, BlockArgument) or not isinstance(
        kernel := buffer.block.parent_op(), KernelOp
    ):
        raise VerifyException(f"{what} buffer must be a tl.kernel argument")
    role = kernel.role_of(buffer)
    if role not in allowed:
        raise VerifyException(
            f"{what} buffer is kernel argument #{buffer.index} with role '{role}'; "
            "expected " + " or ".join(f"'{r}'" for r in sorted(allowed))
        )


def _verify_tile_access(
    op: Operation,
    buffer: SSAValue,
    map: AffineMapAttr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
    tile: TensorType,
    strides: Sequence[int],
    what: str,
) -> None:
    mtype = buffer.type
    assert isinstance(mtype, MemRefType)
    shape = mtype.get_shape()
    verify_map_arity(map.data, len(dims), len(symbols), len(shape), what)
    for i, d in enumerate(dims):
        if _grid_extent(d) is None:
            raise VerifyException(
                f"{what} dim operand #{i} must be an index of the enclosing tl.grid"
            )
    if tile.element_type != mtype.element_type:
        raise VerifyException(
            f"tile element type {tile.element_type} differs from the buffer's "
            f"{mtype.element_type}"
        )
    tshape = tile.get_shape()
    if len(tshape) != len(shape):
        raise VerifyException(
            f"tile rank {len(tshape)} differs from the buffer rank {len(shape)}"
        )
    if len(strides) != len(shape) or any(s <= 0 for s in strides):
        raise VerifyException("strides must be positive, one per buffer dim")
    starts = map_bounds(
        map.data, loop_bounds_of(dims, _grid_extent), [None] * len(symbols)
    )
    for k, (t, s, n, b) in enumerate(zip(tshape, strides, shape, starts)):
        span = (t - 1) * s + 1
        if t <= 0 or span > n:
            raise VerifyException(
                f"the tile does not tile its buffer: dim {k} spans {span} elements "
                f"(tile {t}, stride {s}) of a buffer dim of {n}"
            )
        if b is not None and (b[0] < 0 or b[1] >= n):
            raise VerifyException(
                f"the tile does not tile its buffer: dim {k} starts in [{b[0]}, {b[1]}] "
                f"but the buffer dim is {n}"
            )


def _strides_or_ones(strides: DenseArrayBase | None, rank: int) -> tuple[int, ...]:
    return strides.get_values() if strides is not None else (1,) * rank


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load a tile whose first element is at the map's element offsets.

    ```mlir
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j)
        : memref<512x1024xf32> -> tensor<128x512xf32>
    %r = tl.load %x[affine_map<(d0) -> (d0 * 16, 0)>](%i) strides [2, 1]
        : memref<64x128xf32> -> tensor<8x128xf32>
    ```

    Tile dim k holds the elements `offset_k + stride_k * t` for t < tile dim; a tile
    may run past the end of the buffer (a padded last tile), its start may not.
    """

    name = "tl.load"

    buffer = operand_def(MemRefType)
    dims = var_operand_def(IndexType)
    symbols = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    strides = opt_prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasAncestor(GridOp), MemoryReadEffect())
    assembly_format = (
        "$buffer `[` $map `]` `` `(` $dims `)` (`` `[` $symbols^ `]`)? "
        "(`strides` $strides^)? attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(
        self,
        buffer: SSAValue,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        symbols: Sequence[SSAValue],
        tile_type: TensorType,
        strides: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[buffer, dims, symbols],
            properties={
                "map": map,
                "strides": None
                if strides is None
                else DenseArrayBase.from_list(i64, strides),
            },
            result_types=[tile_type],
        )

    def verify_(self) -> None:
        tile = self.result.type
        assert isinstance(tile, TensorType)
        strides = _strides_or_ones(self.strides, tile.get_num_dims())
        _verify_tile_access(
            self, self.buffer, self.map, self.dims, self.symbols, tile, strides, "load"
        )
        _kernel_arg(self.buffer, READABLE_ROLES - {ArgRole.PREFETCH}, "loaded")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store a tile whose first element goes to the map's element offsets.

    ```mlir
    tl.store %t, %o[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j)
        : tensor<128x512xf32>, memref<512x1024xf32>
    tl.store %p, %o[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <sum>
        : tensor<8x128xf32>, memref<64x128xf32>
    ```

    With `accumulate <sum|prod|max|min>`, the store combines the tiles stored over the
    grid's sequential dims (which must be its last dims, and which the map may not
    use): at the first point of those dims the tile is stored, at the others it is
    combined with what is there. A reduction too big for one tile is summed this way.
    """

    name = "tl.store"

    value = operand_def(TensorType)
    buffer = operand_def(MemRefType)
    dims = var_operand_def(IndexType)
    symbols = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    strides = opt_prop_def(DenseArrayBase[I64])
    accumulate = opt_prop_def(TlReductionKindAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasAncestor(GridOp), MemoryWriteEffect())
    assembly_format = (
        "$value `,` $buffer `[` $map `]` `` `(` $dims `)` (`` `[` $symbols^ `]`)? "
        "(`strides` $strides^)? (`accumulate` ` ` `<` $accumulate^ `>`)? attr-dict "
        "`:` type($value) `,` type($buffer)"
    )

    def __init__(
        self,
        value: SSAValue,
        buffer: SSAValue,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        symbols: Sequence[SSAValue] = (),
        strides: Sequence[int] | None = None,
        accumulate: ReductionKind | None = None,
    ):
        super().__init__(
            operands=[value, buffer, dims, symbols],
            properties={
                "map": map,
                "strides": None
                if strides is None
                else DenseArrayBase.from_list(i64, strides),
                "accumulate": None
                if accumulate is None
                else TlReductionKindAttr(ReductionKind(accumulate)),
            },
        )

    def verify_(self) -> None:
        tile = self.value.type
        assert isinstance(tile, TensorType)
        strides = _strides_or_ones(self.strides, tile.get_num_dims())
        _verify_tile_access(
            self, self.buffer, self.map, self.dims, self.symbols, tile, strides, "store"
        )
        _kernel_arg(self.buffer, WRITABLE_ROLES, "stored")
        if self.accumulate is not None:
            self._verify_accumulate()

    def _verify_accumulate(self) -> None:
        kind = verify_reduction_kind(self.accumulate, self.name)  # type: ignore[arg-type]
        if kind.returns_index:
            raise VerifyException(f"a store cannot accumulate with <{kind}>")
        if self.symbols:
            # A data-dependent offset could move along the sequential dims, while the
            # accumulator must stay in one place as they run.
            raise VerifyException("an accumulating store's offsets may not use symbols")
        sequential = _require_sequential_suffix(self, "an accumulating store")
        for k, d in enumerate(self.dims):
            if (
                _grid_extent(d) is not None
                and d.index in sequential  # type: ignore[attr-defined]
                and k in self.map.data.used_dims()
            ):
                raise VerifyException(
                    "an accumulating store's offsets may not use a sequential grid dim"
                )


def _enclosing_grid(op: Operation) -> GridOp:
    grid = op.parent_op()
    while not isinstance(grid, GridOp):
        assert grid is not None  # HasAncestor(GridOp)
        grid = grid.parent_op()
    return grid


def _require_sequential_suffix(op: Operation, what: str) -> list[int]:
    """The grid's sequential dims, which `what` needs, and which must be its last."""
    grid = _enclosing_grid(op)
    sequential = [
        k for k, s in enumerate(grid.semantics.data) if s.data == GridSemantics.SEQUENTIAL
    ]
    rank = len(grid.extents)
    if not sequential or sequential != list(range(rank - len(sequential), rank)):
        raise VerifyException(
            f"{what} needs the grid's sequential dims, and they must be its last dims"
        )
    return sequential


@irdl_op_definition
class AccumulateOp(IRDLOperation):
    """The running combination of a tile over the grid's sequential dims (its last
    dims): at their first point the tile itself, at each later point the previous
    point's total combined with the tile, for the same point of the other dims. At the
    last point it is the whole reduction. The total is held in VMEM between points, so
    the tile must have 32-bit elements (a split sum of bfloat16 products accumulates
    their f32 dot).

    ```mlir
    %total = tl.accumulate <sum> %partial : tensor<512x512xf32>
    %l = tl.accumulate <sum> %partial rescaled %factor : tensor<8x128x1xf32>
    ```

    A `<sum>` may be `rescaled` by a tile of the partial's type: at the first point the
    total is the partial, at each later one `previous_total * factor + partial` (the
    online softmax rescales its running sums by `exp(m_prev - m)` when the running
    maximum grows). What is computed from the total and stored goes in
    `tl.on_last_step`, which runs once, when the total is complete.
    """

    name = "tl.accumulate"

    T: ClassVar = VarConstraint("T", base(TensorType))
    partial = operand_def(T)
    rescale = opt_operand_def(T)
    kind = prop_def(TlReductionKindAttr)
    result = result_def(T)

    traits = traits_def(HasAncestor(GridOp))
    assembly_format = (
        "` ` `<` $kind `>` $partial (`rescaled` $rescale^)? attr-dict `:` type($partial)"
    )

    def __init__(
        self,
        kind: ReductionKind,
        partial: SSAValue,
        rescale: SSAValue | None = None,
    ):
        super().__init__(
            operands=[partial, [] if rescale is None else [rescale]],
            result_types=[partial.type],
            properties={"kind": TlReductionKindAttr(ReductionKind(kind))},
        )

    def verify_(self) -> None:
        kind = verify_reduction_kind(self.kind, self.name)
        if kind.returns_index:
            raise VerifyException(f"tl.accumulate cannot combine with <{kind}>")
        t = self.partial.type
        assert isinstance(t, TensorType)
        if getattr(t.element_type, "bitwidth", 0) != 32:
            raise VerifyException(
                f"tl.accumulate holds 32-bit totals, not {t.element_type}"
            )
        # (the factor has the partial's type: both are `T`)
        if self.rescale is not None and kind != ReductionKind.SUM:
            raise VerifyException(
                f"only a <sum> tl.accumulate can be rescaled, not <{kind}>"
            )
        _require_sequential_suffix(self, "tl.accumulate")


@irdl_op_definition
class PreviousOp(IRDLOperation):
    """A `tl.accumulate`'s total before this point's combination: at the first point of
    the grid's sequential dims the identity of its kind (sum 0, prod 1, max -inf, min
    +inf; for integers 0, 1, the lowest and the highest value), at each later point the
    total after the previous point, for the same point of the other dims.

    ```mlir
    %m = tl.accumulate <max> %rowmax : tensor<8x128x1xf32>
    %m_prev = tl.previous %m : tensor<8x128x1xf32>
    ```

    The online softmax rescales its running sums by `exp(m_prev - m)` when the running
    maximum `m` grows (the caller guards `m == -inf`).
    """

    name = "tl.previous"

    T: ClassVar = VarConstraint("T", base(TensorType))
    total = operand_def(T)
    result = result_def(T)

    traits = traits_def(HasAncestor(GridOp), Pure())
    assembly_format = "$total attr-dict `:` type($total)"

    def __init__(self, total: SSAValue):
        super().__init__(operands=[total], result_types=[total.type])

    @property
    def accumulate(self) -> AccumulateOp:
        """The `tl.accumulate` whose previous total this is."""
        owner = self.total.owner
        assert isinstance(owner, AccumulateOp)  # verified
        return owner

    def verify_(self) -> None:
        if not isinstance(self.total.owner, AccumulateOp):
            raise VerifyException(
                "tl.previous reads the result of a tl.accumulate, not "
                + (
                    f"of '{self.total.owner.name}'"
                    if isinstance(self.total.owner, Operation)
                    else "a block argument"
                )
            )
        _require_sequential_suffix(self, "tl.previous")


@irdl_op_definition
class OnLastStepOp(IRDLOperation):
    """Run the body only at the last point of the grid's sequential dims (its last
    dims): the epilogue of a split reduction, computed from its complete
    `tl.accumulate` total and stored once per output block.

    ```mlir
    tl.on_last_step {
      %y = arith.truncf %total : tensor<512x512xf32> to tensor<512x512xbf16>
      tl.store %y, %o[affine_map<(d0, d1, d2) -> (d0 * 512, d1 * 512)>](%i, %j, %k)
          : tensor<512x512xbf16>, memref<4096x4096xbf16>
    }
    ```
    """

    name = "tl.on_last_step"

    body = region_def("single_block")

    traits = traits_def(HasAncestor(GridOp), NoTerminator())
    assembly_format = "attr-dict-with-keyword $body"

    def __init__(self, body: Region):
        super().__init__(regions=[body])

    def verify_(self) -> None:
        _require_sequential_suffix(self, "tl.on_last_step")
        for op in self.body.walk():
            if isinstance(op, AccumulateOp | OnLastStepOp | WhenOp):
                raise VerifyException(f"'{op.name}' cannot be inside tl.on_last_step")


@irdl_op_definition
class WhenOp(IRDLOperation):
    """Run the body only at the grid points where the map's single result, evaluated
    on the operands (indices of the enclosing `tl.grid`), is >= 0 (an `affine.if`
    constraint `>= 0`): a causal flash attention skips the key blocks its mask hides
    wholly, computing no dots and no exponentials there.

    ```mlir
    %m, %l, %acc = tl.when affine_map<(d0, d1, d2) -> (d1 * 512 + 511 - d2 * 512)>(%b, %i, %k) {
      ...
      %m1 = tl.accumulate <max> %rowmax : tensor<512x1xf32>
      %mp = tl.previous %m1 : tensor<512x1xf32>
      %l1 = tl.accumulate <sum> %rowsum rescaled %alpha : tensor<512x1xf32>
      %a1 = tl.accumulate <sum> %pv rescaled %alpha2 : tensor<512x64xf32>
      tl.yield %m1, %l1, %a1 : tensor<512x1xf32>, tensor<512x1xf32>, tensor<512x64xf32>
    } : tensor<512x1xf32>, tensor<512x1xf32>, tensor<512x64xf32>
    ```

    The results are the totals of `tl.accumulate`s directly in the body, which it
    yields: where the body runs, the total after this point's combination; where it
    does not, the total so far, unchanged (the point contributes nothing). A
    `tl.accumulate` inside combines only where the body runs, and a `tl.previous`
    inside is the total before this point's combination.

    An accumulator starts at the first point of the grid's sequential dims, so a body
    holding a `tl.accumulate` must run there: the condition, with every sequential dim
    at 0, must be >= 0 for every point of the parallel dims. The condition is linear in
    the grid indices (no `floordiv`, `ceildiv` or `mod`). The body stores nothing (its
    results are stored in `tl.on_last_step`) and holds no `tl.on_last_step` or
    `tl.when`.
    """

    name = "tl.when"

    dims = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    body = region_def("single_block")
    totals = var_result_def(TensorType)

    traits = traits_def(HasAncestor(GridOp))
    assembly_format = (
        "$map `(` $dims `)` attr-dict-with-keyword $body (`:` type($totals)^)?"
    )

    def __init__(
        self,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        body: Region,
        result_types: Sequence[Attribute] | None = None,
    ):
        """`result_types` default to the types the body's `tl.yield` yields."""
        if result_types is None:
            last = body.block.last_op
            result_types = (
                [v.type for v in last.values] if isinstance(last, YieldOp) else []
            )
        super().__init__(
            operands=[dims],
            properties={"map": map},
            regions=[body],
            result_types=[result_types],
        )

    @property
    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)  # verified
        return last

    def verify_(self) -> None:
        if len(self.map.data.results) != 1:
            raise VerifyException(
                f"tl.when's map has {len(self.map.data.results)} results, not the one "
                "of its condition"
            )
        verify_map_arity(self.map.data, len(self.dims), 0, 1, "tl.when")
        for i, d in enumerate(self.dims):
            if _grid_extent(d) is None:
                raise VerifyException(
                    f"tl.when dim operand #{i} must be an index of the enclosing tl.grid"
                )
        (expr,) = self.map.data.results
        on_grid = expr.replace_dims_and_symbols(
            [AffineDimExpr(d.index) for d in self.dims],  # type: ignore[attr-defined]
            [],
        )
        condition = linearize(on_grid)
        if condition is None:
            raise VerifyException(
                f"tl.when's condition {expr} must be linear in the grid indices "
                "(no floordiv, ceildiv or mod)"
            )
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("tl.when's body ends in a tl.yield")
        if [v.type for v in last.values] != [r.type for r in self.totals]:
            raise VerifyException(
                f"tl.when yields {len(last.values)} values of types "
                f"({', '.join(str(v.type) for v in last.values)}), but its results are "
                f"({', '.join(str(r.type) for r in self.totals)})"
            )
        for k, v in enumerate(last.values):
            owner = v.owner
            if not (
                isinstance(owner, AccumulateOp) and owner.parent_block() is last.parent
            ):
                raise VerifyException(
                    f"tl.when yields the results of tl.accumulates directly in its "
                    f"body, and value #{k} is not one"
                )
        holds_accumulator = False
        for op in self.body.walk():
            if isinstance(op, OnLastStepOp | WhenOp | StoreOp | ScatterOp):
                raise VerifyException(
                    f"'{op.name}' cannot be inside tl.when"
                    + (
                        ": yield tl.accumulate totals and store them in tl.on_last_step"
                        if isinstance(op, StoreOp | ScatterOp)
                        else ""
                    )
                )
            holds_accumulator |= isinstance(op, AccumulateOp)
        if holds_accumulator:
            self._verify_runs_at_first_step(expr, condition.dims, condition.constant)

    def _verify_runs_at_first_step(
        self, expr: AffineExpr, coefficients: dict[int, int], constant: int
    ) -> None:
        """The condition's minimum over the parallel dims' box, the sequential dims at
        0 (affine: at a corner of the box), is >= 0."""
        grid = _enclosing_grid(self)
        point = [0] * len(grid.extents)
        for k, c in coefficients.items():
            parallel = grid.semantics.data[k].data == GridSemantics.PARALLEL
            if parallel and c < 0:
                point[k] = grid.extents[k] - 1
        lowest = constant + sum(c * point[k] for k, c in coefficients.items())
        if lowest < 0:
            raise VerifyException(
                "a tl.when holding a tl.accumulate must run at the first step of the "
                f"grid's sequential dims, where its accumulators start, but its "
                f"condition {expr} is {lowest} < 0 at grid point "
                f"({', '.join(map(str, point))})"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The totals a `tl.when` gives: results of `tl.accumulate`s directly in its body.

    ```mlir
    tl.yield %m, %l : tensor<512x1xf32>, tensor<512x1xf32>
    ```
    """

    name = "tl.yield"

    values = var_operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(WhenOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


@irdl_op_definition
class ScalarLoadOp(IRDLOperation):
    """Read one prefetched integer as an index, to offset tiles by data.

    ```mlir
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    ```
    """

    name = "tl.scalar_load"

    buffer = operand_def(MemRefType)
    dims = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def(IndexType)

    traits = traits_def(HasAncestor(GridOp), MemoryReadEffect())
    assembly_format = "$buffer `[` $map `]` `` `(` $dims `)` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, map: AffineMapAttr, dims: Sequence[SSAValue]):
        super().__init__(
            operands=[buffer, dims], properties={"map": map}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        mtype = self.buffer.type
        assert isinstance(mtype, MemRefType)
        if not isinstance(mtype.element_type, IntegerType):
            raise VerifyException("tl.scalar_load reads an integer buffer")
        verify_map_arity(
            self.map.data, len(self.dims), 0, mtype.get_num_dims(), "scalar_load"
        )
        for i, d in enumerate(self.dims):
            if _grid_extent(d) is None:
                raise VerifyException(
                    f"scalar_load dim operand #{i} must be an index of the enclosing tl.grid"
                )
        bounds = map_bounds(self.map.data, loop_bounds_of(self.dims, _grid_extent), [])
        for k, (b, n) in enumerate(zip(bounds, mtype.get_shape())):
            if b is not None and (b[0] < 0 or b[1] >= n):
                raise VerifyException(
                    f"scalar_load index #{k} ranges over [{b[0]}, {b[1]}] but the buffer "
                    f"dim is {n}"
                )
        _kernel_arg(self.buffer, frozenset({ArgRole.PREFETCH}), "scalar_load")


@irdl_op_definition
class TransposeOp(TransposeOpBase):
    """Permute the dims of a tile.

    ```mlir
    %t = tl.transpose %v [1, 0] : tensor<128x256xf32> -> tensor<256x128xf32>
    ```
    """

    name = "tl.transpose"

    traits = traits_def(Pure(), TransposeHasCanonicalizationPatterns())


@irdl_op_definition
class RollOp(RollOpBase):
    """Rotate a tile along one dim (`jnp.roll`): a load of a whole dim at a rotated
    index.

    ```mlir
    %r = tl.roll %v by 16 along 1 : tensor<64x32xf32>
    ```
    """

    name = "tl.roll"


@irdl_op_definition
class BroadcastOp(BroadcastOpBase):
    """Repeat the size-1 dims of a tile.

    ```mlir
    %b = tl.broadcast %v : tensor<1x128xf32> to tensor<8x128xf32>
    ```
    """

    name = "tl.broadcast"


@irdl_op_definition
class ReduceOp(ReduceTileOpBase):
    """Reduce a tile over some dims, keeping them with size 1.

    ```mlir
    %s = tl.reduce <sum> %v [1] : tensor<8x128xf32> -> tensor<8x1xf32>
    %a = tl.reduce <argmax> %v [1] : tensor<8x128xf32> -> tensor<8x1xi32>
    ```
    """

    name = "tl.reduce"


@irdl_op_definition
class ReshapeOp(ReshapeOpBase):
    """Reshape a tile (row-major, same elements), e.g. to drop or add unit dims.

    ```mlir
    %r = tl.reshape %v : tensor<8x1x128xf32> to tensor<8x128xf32>
    ```
    """

    name = "tl.reshape"

    traits = traits_def(Pure(), ReshapeHasCanonicalizationPatterns())


@irdl_op_definition
class ConvertOp(ConvertOpBase):
    """Convert each element of a tile to another element type (numpy `astype`):
    float → int truncates toward zero, int → int wraps; see `ConvertOpBase`.

    ```mlir
    %w = tl.convert %v : tensor<32x128xi8> to tensor<32x128xi32>
    %i = tl.convert %f : tensor<8x128xf32> to tensor<8x128xi32>
    ```
    """

    name = "tl.convert"


@irdl_op_definition
class CompareOp(CompareOpBase):
    """Compare two tiles elementwise (arith's predicates), giving an `i1` tile.

    ```mlir
    %c = tl.compare <ogt> %a, %b : tensor<8x128xf32>
    ```
    """

    name = "tl.compare"


@irdl_op_definition
class SelectOp(SelectOpBase):
    """Choose elementwise between two tiles by an `i1` tile.

    ```mlir
    %r = tl.select %c, %a, %b : tensor<8x128xi1>, tensor<8x128xf32>
    ```
    """

    name = "tl.select"


@irdl_op_definition
class DotOp(DotOpBase):
    """A matrix product of two tiles, accumulated in f32 (i32 for integers).

    ```mlir
    %c = tl.dot %a, %b : tensor<128x256xbf16>, tensor<256x128xbf16> -> tensor<128x128xf32>
    %d = tl.dot %x, %y precision <highest>
        : tensor<8x128xf32>, tensor<128x128xf32> -> tensor<8x128xf32>
    ```
    """

    name = "tl.dot"

    precision = opt_prop_def(TlDotPrecisionAttr)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Gather whole rows of a table by prefetched indices: row r of the tile is
    `table[index[m + r]]`, where `m` is the map's element offset into the index buffer
    (its row-major position when the buffer is N-D); positions past the end of the
    buffer read its last index (a ragged last grid step, whose extra rows the stores
    drop).

    ```mlir
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i)
        : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
    ```

    With several index buffers, each picks one of the table's leading dims, all read at
    the same positions: row r is `table[i0[m + r], i1[m + r]]` (`x[i0, i1]` in torch).

    ```mlir
    %rows = tl.gather %x, %i0, %i1[affine_map<(d0) -> (d0 * 8)>](%i)
        : memref<100x50x256xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x256xf32>
    ```

    The tile's other dims are the table's (whole rows). `tl-to-pallas` turns it into one
    manual row DMA per row from the table left in HBM (the G3 idiom): exactly the rows
    used move, and the table is never relaid out. A `prefetch` index buffer is read
    whole from SMEM; an `in` one (too big for SMEM) is streamed to SMEM in chunks of
    1024 lookups (G3c). `{table = "vmem"}` keeps the table whole in VMEM instead (G4:
    fetched once, rows copied locally).
    """

    name = "tl.gather"

    table = operand_def(MemRefType)
    indices = var_operand_def(MemRefType)
    dims = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def(TensorType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasAncestor(GridOp), MemoryReadEffect())

    def __init__(
        self,
        table: SSAValue,
        indices: Sequence[SSAValue],
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        tile_type: TensorType,
    ):
        super().__init__(
            operands=[table, indices, dims],
            properties={"map": map},
            result_types=[tile_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> GatherOp:
        table = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        indices = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(","):
            indices.append(parser.parse_unresolved_operand())
        access = parse_access(parser, indices[-1])
        if access.symbols:
            parser.raise_error(
                "tl.gather takes no symbols: its index is the map's offset"
            )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ttype = parser.parse_type()
        itypes = []
        for _ in indices:
            parser.parse_punctuation(",")
            itypes.append(parser.parse_type())
        parser.parse_punctuation("->")
        rtype = parser.parse_type()
        if not isinstance(rtype, TensorType):
            parser.raise_error("expected `memref, memref... -> tensor`", pos, parser.pos)
        op = cls(
            parser.resolve_operand(table, ttype),
            [parser.resolve_operand(i, t) for i, t in zip(indices, itypes)],
            AffineMapAttr(access.map),
            resolve_indices(parser, access.dims),
            rtype,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.table)
        printer.print_string(", ")
        printer.print_list(self.indices[:-1], printer.print_operand)
        if len(self.indices) > 1:
            printer.print_string(", ")
        print_access(printer, self.indices[-1], self.map, self.dims, ())
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list(
            [self.table.type, *(i.type for i in self.indices)], printer.print_attribute
        )
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        table, tile = self.table.type, self.result.type
        assert isinstance(table, MemRefType) and isinstance(tile, TensorType)
        if not self.indices:
            raise VerifyException("tl.gather needs an index buffer")
        verify_map_arity(self.map.data, len(self.dims), 0, 1, "gather")
        for i, d in enumerate(self.dims):
            if _grid_extent(d) is None:
                raise VerifyException(
                    f"gather dim operand #{i} must be an index of the enclosing tl.grid"
                )
        picked = len(self.indices)
        if tile.get_num_dims() != table.get_num_dims() - picked + 1 or list(
            tile.get_shape()[1:]
        ) != list(table.get_shape()[picked:]):
            by = f" by {picked} index buffers" if picked > 1 else ""
            raise VerifyException(
                f"a gather of whole rows of {table}{by} cannot be {tile}"
            )
        if tile.element_type != table.element_type:
            raise VerifyException("a gather keeps the table's element type")
        (b,) = map_bounds(self.map.data, loop_bounds_of(self.dims, _grid_extent), [])
        for index in self.indices:
            t = index.type
            assert isinstance(t, MemRefType)
            if not isinstance(t.element_type, IntegerType):
                raise VerifyException("tl.gather reads an integer index buffer")
            if b is not None and (b[0] < 0 or b[1] >= t.element_count()):
                raise VerifyException(
                    f"the gather's first index positions [{b[0]}, {b[1]}] leave the "
                    f"{t.element_count()} indices"
                )
            _kernel_arg(index, frozenset({ArgRole.PREFETCH, ArgRole.IN}), "gather index")
        _kernel_arg(self.table, READABLE_ROLES - {ArgRole.PREFETCH}, "gathered")


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """Write the rows of a tile to rows of a buffer picked by prefetched indices: row r
    of the `(R, W)` tile goes to `dest[lead..., index[m + r], :]`, where `lead` are the
    lead map's results (one per dest dim before the scattered one) and `m` the index
    map's (the element offset into the rank-1 index buffer, read flat as gathers read
    theirs). Rows with `m + r` past the end of
    the index buffer (a ragged last step) are not written; what no row reaches keeps
    its contents (the dest is `inout`).

    ```mlir
    tl.scatter %rows, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>],
        %pos[affine_map<(d0, d1, d2) -> (d2 * 8)>](%i, %j, %k)
        : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<16xi32>
    ```

    Rows are written in order, and the grid dims the index map uses are sequential, so
    where two rows go to one place the later one wins, as in eager PyTorch. With
    `accumulate <sum>` each row is added to what is there (repeated indices sum).
    `tl-to-pallas` turns it into one manual row DMA per row, from VMEM into the dest
    left in HBM and aliased to the kernel's output: exactly the rows written move (the
    KV-cache update idiom).
    """

    name = "tl.scatter"

    value = operand_def(TensorType)
    dest = operand_def(MemRefType)
    index = operand_def(MemRefType)
    dims = var_operand_def(IndexType)
    lead_map = prop_def(AffineMapAttr)
    index_map = prop_def(AffineMapAttr)
    accumulate = opt_prop_def(TlReductionKindAttr)

    traits = traits_def(HasAncestor(GridOp), MemoryWriteEffect(), MemoryReadEffect())
    assembly_format = (
        "$value `,` $dest `[` $lead_map `]` `,` $index `[` $index_map `]` `` "
        "`(` $dims `)` (`accumulate` ` ` `<` $accumulate^ `>`)? attr-dict "
        "`:` type($value) `,` type($dest) `,` type($index)"
    )

    def __init__(
        self,
        value: SSAValue,
        dest: SSAValue,
        lead_map: AffineMapAttr,
        index: SSAValue,
        index_map: AffineMapAttr,
        dims: Sequence[SSAValue],
        accumulate: ReductionKind | None = None,
    ):
        super().__init__(
            operands=[value, dest, index, dims],
            properties={
                "lead_map": lead_map,
                "index_map": index_map,
                "accumulate": None
                if accumulate is None
                else TlReductionKindAttr(ReductionKind(accumulate)),
            },
        )

    def verify_(self) -> None:
        tile, dest, index = self.value.type, self.dest.type, self.index.type
        assert isinstance(tile, TensorType) and isinstance(dest, MemRefType)
        assert isinstance(index, MemRefType)
        n = len(self.dims)
        rank = dest.get_num_dims()
        verify_map_arity(self.lead_map.data, n, 0, rank - 2, "scatter lead")
        verify_map_arity(self.index_map.data, n, 0, 1, "scatter index")
        if rank < 2 or tile.get_num_dims() != 2:
            raise VerifyException(
                f"tl.scatter writes rows of a 2-D tile into a buffer of rank >= 2, not "
                f"{tile} into {dest}"
            )
        if tile.get_shape()[1] != dest.get_shape()[-1]:
            raise VerifyException(f"rows of {tile} are not whole rows of {dest}")
        if tile.element_type != dest.element_type:
            raise VerifyException("a scatter keeps the buffer's element type")
        if not isinstance(index.element_type, IntegerType) or index.get_num_dims() != 1:
            raise VerifyException("tl.scatter reads a rank-1 integer index buffer")
        if self.accumulate is not None and (
            verify_reduction_kind(self.accumulate, self.name) != ReductionKind.SUM
        ):
            raise VerifyException("a scatter accumulates with <sum> only")
        grid = self.parent_op()
        while not isinstance(grid, GridOp):
            assert grid is not None  # HasAncestor(GridOp)
            grid = grid.parent_op()
        for k, d in enumerate(self.dims):
            if _grid_extent(d) is None:
                raise VerifyException(
                    f"scatter dim operand #{k} must be an index of the enclosing tl.grid"
                )
            if (
                k in self.index_map.data.used_dims()
                and grid.semantics.data[d.index].data != GridSemantics.SEQUENTIAL  # type: ignore[attr-defined]
            ):
                raise VerifyException(
                    "the grid dims a scatter's index map uses must be sequential: rows "
                    "that go to one place are written in order"
                )
        _kernel_arg(self.index, frozenset({ArgRole.PREFETCH}), "scatter index")
        _kernel_arg(self.dest, frozenset({ArgRole.INOUT}), "scattered")


@irdl_op_definition
class IotaOp(IotaOpBase):
    """The loop indices a tile covers, as i32 values: element `x` along `dim` is
    `offset + x` (the same across the other dims), where the map gives the offset from
    the grid indices.

    ```mlir
    %j = tl.iota dim 1 offset affine_map<(d0, d1) -> (d1 * 128)> (%i, %jj) : tensor<1x128xi32>
    ```
    """

    name = "tl.iota"

    dims = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)

    traits = traits_def(HasAncestor(GridOp), Pure())
    assembly_format = "`dim` $dim `offset` $map `(` $dims `)` attr-dict `:` type($result)"

    def __init__(
        self,
        dim: int,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        tile_type: TensorType,
    ):
        super().__init__(
            operands=[dims],
            properties={"dim": IntegerAttr(dim, i64), "map": map},
            result_types=[tile_type],
        )

    def verify_(self) -> None:
        super().verify_()
        verify_map_arity(self.map.data, len(self.dims), 0, 1, "iota")
        for i, d in enumerate(self.dims):
            if _grid_extent(d) is None:
                raise VerifyException(
                    f"iota dim operand #{i} must be an index of the enclosing tl.grid"
                )


TiledLoop = Dialect(
    "tl",
    [
        AccumulateOp,
        PreviousOp,
        OnLastStepOp,
        WhenOp,
        YieldOp,
        IotaOp,
        GatherOp,
        ScatterOp,
        DotOp,
        KernelOp,
        GridOp,
        LoadOp,
        StoreOp,
        ScalarLoadOp,
        TransposeOp,
        RollOp,
        BroadcastOp,
        ReduceOp,
        ConvertOp,
        CompareOp,
        SelectOp,
        ReshapeOp,
    ],
    [
        GridSemanticsAttr,
        TlArgRoleAttr,
        TlReductionKindAttr,
        TlComparePredicateAttr,
        TlDotPrecisionAttr,
    ],
)
