"""The `ta` (tensor_access) dialect: element-level loops over flat storage.

This is the frontend's output and the level where index analysis happens: the MLIR
form of Inductor's loop-level IR. A `ta.kernel` is one fused kernel (later one
`pallas_call`); a `ta.loop` inside it is an iteration domain whose body runs once per
point; `ta.load`/`ta.store` reach buffers through affine index maps of the loop
variables (dims) and of data-dependent values (symbols); scalar compute uses `arith`
and `math`. Outside kernels, `ta.alloc`, `ta.reshape` and `ta.launch` describe the host
side, inside a `func.func @forward`.

Buffers are storage, not views: a rank-1 `memref<NxT>` is the flat storage of a torch
tensor (offset and strides live in the index maps); after the ta passes, a buffer may
be an N-D contiguous `memref<AxBxT>` and maps give one index per dim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import ClassVar

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    SymbolRefAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsTerminator,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pallas_ir.dialects.common import (
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    KernelOpBase,
    ReductionKind,
    loop_bounds_of,
    map_bounds,
    parse_optional_attributes_keyword,
    parse_reduction_kind,
    print_optional_attributes_keyword,
    reduction_result_type,
    verify_map_arity,
    verify_same_elements,
)
from pallas_ir.dialects.enums import TaArgRoleAttr, TaReductionKindAttr
from pallas_ir.dialects.library_call import (
    LibraryCallOpBase,
    Param,
    params_attr,
    shapes_attr,
)
from pallas_ir.library import LibraryFn
from pallas_ir.symbols import lookup_symbol


class KernelTarget(StrEnum):
    """Where a `ta.kernel` runs when it is not a Pallas kernel."""

    XLA = "xla"


@irdl_attr_definition
class KernelTargetAttr(EnumAttribute[KernelTarget], SpacedOpaqueSyntaxAttribute):
    """The `target` of a `ta.kernel`: `#ta<target xla>`."""

    name = "ta.target"


XLA_TARGET = KernelTargetAttr(KernelTarget.XLA)
"""The `target` of a `ta.kernel` that runs as XLA, not as a Pallas kernel."""


class XlaAccess(StrEnum):
    """The one access xla-outline moved out of a Pallas kernel into an XLA kernel (a
    kernel with no `xla_access` runs on XLA whole)."""

    GATHER = "gather"
    """A gather, written to a buffer the Pallas kernel then reads."""
    SCATTER = "scatter"
    """A partial store, scattered from a buffer the Pallas kernel wrote."""
    INDEX = "index"
    """A gather's computed row indices, for the Pallas kernel's row DMAs."""


@irdl_attr_definition
class XlaAccessAttr(EnumAttribute[XlaAccess], SpacedOpaqueSyntaxAttribute):
    """The `xla_access` of an XLA `ta.kernel`: `#ta<xla_access gather>`."""

    name = "ta.xla_access"


class GatherStrategy(StrEnum):
    """The idiom indirect-load-to-scalar-prefetch picks for a gather (see that pass)."""

    PREFETCH = "prefetch"
    """G1: the prefetched index feeds the table's BlockSpec index map."""
    DMA = "dma"
    """G3: the table stays in HBM and rows come by manual DMAs."""
    VMEM = "vmem"
    """G4: the whole table is one VMEM block read with dynamic row loads."""
    DMA_CHUNKED = "dma_chunked"
    """G3c: rows by DMA, the index buffer streamed to SMEM in chunks."""


@irdl_attr_definition
class GatherStrategyAttr(EnumAttribute[GatherStrategy], SpacedOpaqueSyntaxAttribute):
    """The `gather` attribute of a `ta.load`: `#ta<gather_strategy dma>`."""

    name = "ta.gather_strategy"


GATHER_ATTR = "gather"
"""The `ta.load` attribute that holds its `GatherStrategyAttr`."""


def gather_strategy(op: Operation) -> GatherStrategy | None:
    """The gather strategy a `ta.load` is marked with, or None."""
    attr = op.attributes.get(GATHER_ATTR)
    return attr.data if isinstance(attr, GatherStrategyAttr) else None


@irdl_op_definition
class KernelOp(KernelOpBase):
    """One fused kernel; it becomes one `pallas_call`.

    ```mlir
    ta.kernel @mul(%x: memref<16384xf32> {role = "in"},
                   %out: memref<8192xf32> {role = "out"}) {
      ta.loop [64, 128] (%i, %j) { ... }
    }
    ```

    Every argument is a buffer with a role: `in` (read), `out` (written), `inout`
    (both) or `prefetch` (a small integer buffer whose values choose what to read).

    `attributes {target = #ta<target xla>}` marks a kernel the tiler hands to XLA (an access or
    a dtype no Pallas idiom covers): it is not tiled, and @forward calls it as it is.
    """

    name = "ta.kernel"

    @property
    def on_xla(self) -> bool:
        return self.attributes.get("target") == XLA_TARGET

    @property
    def xla_access(self) -> XlaAccess | None:
        """The one access this XLA kernel holds, or None for a whole kernel on XLA."""
        attr = self.attributes.get("xla_access")
        return attr.data if isinstance(attr, XlaAccessAttr) else None

    def verify_(self) -> None:
        super().verify_()
        # Typed contracts between passes: a misspelt one must not silently mean "none".
        target = self.attributes.get("target")
        if target is not None and not isinstance(target, KernelTargetAttr):
            raise VerifyException(f"'target' must be a #ta<target ...>, got {target}")
        access = self.attributes.get("xla_access")
        if access is not None and not (isinstance(access, XlaAccessAttr) and self.on_xla):
            raise VerifyException(
                "'xla_access' must be a #ta<xla_access ...> on a kernel with "
                f"target = #ta<target xla>, got {access}"
            )


@irdl_attr_definition
class LibraryFnAttr(EnumAttribute[LibraryFn], SpacedOpaqueSyntaxAttribute):
    """The function of a `ta.library_call`: `#ta<library_fn sort>`."""

    name = "ta.library_fn"


@irdl_op_definition
class LibraryCallOp(LibraryCallOpBase):
    """A library function (`pallas_ir.library`) on whole buffers: the body of a kernel
    with `target = #ta<target xla>`, which runs it as XLA.

    ```mlir
    ta.kernel @sort(%x: memref<64xf32> {role = "in"}, %v: memref<64xf32> {role = "out"},
                    %i: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>} {
      ta.library_call #ta<library_fn sort> (%x) -> (%v, %i)
          shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>]
          params {descending = false, dim = 1 : i64, stable = false}
          : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
    }
    ```

    It reads `inputs` and writes all of `outputs` (kernel arguments), each in the shape
    `shapes` gives (inputs first): there is no loop, so nothing here tiles.
    """

    name = "ta.library_call"

    fn = prop_def(LibraryFnAttr)
    shapes = prop_def(ArrayAttr[DenseArrayBase])
    params = prop_def(DictionaryAttr)
    inputs = var_operand_def(MemRefType)
    outputs = var_operand_def(MemRefType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasParent(KernelOp), MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$fn `(` $inputs `)` `->` `(` $outputs `)` `shapes` $shapes `params` $params "
        "attr-dict `:` `(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(
        self,
        fn: LibraryFn,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        shapes: Sequence[Sequence[int]],
        params: Mapping[str, Param],
    ):
        super().__init__(
            operands=[inputs, outputs],
            properties={
                "fn": LibraryFnAttr(fn),
                "shapes": shapes_attr(shapes),
                "params": params_attr(params),
            },
        )

    def verify_(self) -> None:
        super().verify_()
        kernel = self.parent_op()
        assert isinstance(kernel, KernelOp)
        if not kernel.on_xla:
            raise VerifyException(
                "ta.library_call runs on XLA: its kernel needs target = #ta<target xla>"
            )
        for value in [*self.inputs, *self.outputs]:
            if not (
                isinstance(value, BlockArgument) and value.owner is kernel.body.block
            ):
                raise VerifyException("ta.library_call takes its kernel's arguments")
        for value in self.outputs:
            if kernel.role_of(value) not in WRITABLE_ROLES:
                raise VerifyException(
                    "ta.library_call writes arguments the kernel writes"
                )


@irdl_op_definition
class LoopOp(IRDLOperation):
    """An iteration domain; the body runs once per point.

    ```mlir
    ta.loop [64, 128] reduce [256] (%i, %j, %k) { ... }
    ```

    The block arguments are the loop variables: first one per parallel dim, then one
    per reduction dim. A value in the body is a function of the parallel point and,
    if it depends on a reduction variable, of the reduction point too. `ta.reduce`
    combines such a value over the whole reduction domain; its result is a function
    of the parallel point alone and may be used anywhere in the body (softmax uses a
    max and a sum at every point of the row it normalises).
    """

    name = "ta.loop"

    bounds = prop_def(DenseArrayBase[I64])
    reduce_bounds = prop_def(DenseArrayBase[I64])
    body = region_def("single_block")

    traits = traits_def(HasParent(KernelOp), NoTerminator())

    def __init__(
        self,
        bounds: Sequence[int],
        reduce_bounds: Sequence[int] = (),
        body: Region | None = None,
    ):
        if body is None:
            body = Region(
                Block(arg_types=[IndexType()] * (len(bounds) + len(reduce_bounds)))
            )
        super().__init__(
            properties={
                "bounds": DenseArrayBase.from_list(i64, bounds),
                "reduce_bounds": DenseArrayBase.from_list(i64, reduce_bounds),
            },
            regions=[body],
        )

    @property
    def parallel_extents(self) -> tuple[int, ...]:
        return self.bounds.get_values()

    @property
    def reduce_extents(self) -> tuple[int, ...]:
        return self.reduce_bounds.get_values()

    @property
    def extents(self) -> tuple[int, ...]:
        return self.parallel_extents + self.reduce_extents

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        bounds = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        reduce_bounds: list[int] = []
        if parser.parse_optional_keyword("reduce") is not None:
            reduce_bounds = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        args = [iv.resolve(IndexType()) for iv in ivs]
        attrs = parse_optional_attributes_keyword(parser)
        body = parser.parse_region(args)
        op = cls(bounds, reduce_bounds, body)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        printer.print_list(self.parallel_extents, lambda n: printer.print_string(str(n)))
        printer.print_string("]")
        if self.reduce_extents:
            printer.print_string(" reduce [")
            printer.print_list(
                self.reduce_extents, lambda n: printer.print_string(str(n))
            )
            printer.print_string("]")
        printer.print_string(" (")
        printer.print_list(self.body.block.args, printer.print_operand)
        printer.print_string(")")
        print_optional_attributes_keyword(printer, dict(self.attributes))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        extents = self.extents
        if not self.parallel_extents and not self.reduce_extents:
            raise VerifyException("a loop needs at least one dim")
        for n in extents:
            if n <= 0:
                raise VerifyException(f"loop extents must be positive, got {n}")
        args = self.body.block.args
        if len(args) != len(extents):
            raise VerifyException(
                f"loop has {len(extents)} dims but {len(args)} loop variables"
            )
        for a in args:
            if not isinstance(a.type, IndexType):
                raise VerifyException("loop variables must be of type index")

    def is_reduce_var(self, value: SSAValue) -> bool:
        return (
            isinstance(value, BlockArgument)
            and value.block is self.body.block
            and value.index >= len(self.parallel_extents)
        )


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Softmax attention over one iteration domain: for every batch point `b`, query
    `i` and value column `e`,

        s[b, i, j]   = sum_d q[b, i, d] * k[b, j, d]      (f32)
        t[b, i, j]   = score(b, i, j, s[b, i, j])
        out[b, i, e] = sum_j softmax_j(t[b, i, :])[j] * v[b, j, e]

    ```mlir
    ta.attention batch [8] sizes [512, 512, 64, 64]
        q %q[affine_map<(b, i, j, d, e) -> (b * 32768 + i * 64 + d)>]
        k %k[affine_map<(b, i, j, d, e) -> (b * 32768 + j * 64 + d)>]
        v %v[affine_map<(b, i, j, d, e) -> (b * 32768 + j * 64 + e)>]
        out %o[affine_map<(b, i, j, d, e) -> (b * 32768 + i * 64 + e)>]
        : memref<262144xf32>, memref<262144xf32>, memref<262144xf32>, memref<262144xf32>
        score {
      ^bb0(%b: index, %i: index, %j: index, %s: f32):
        %c = arith.constant 1.250000e-01 : f32
        %t = arith.mulf %s, %c : f32
        ta.yield %t : f32
    }
    ```

    The domain is the batch dims, then (i, j, d, e) with extents `sizes` = (queries,
    keys, head dim, value dim). Each map takes the whole domain and may use only the
    dims its operand varies along (q: batch, i, d; k: batch, j, d; v: batch, j, e;
    out: batch, i, e). `score` (the scale, masks, a bias) runs once per (b, i, j); its
    block arguments are the batch dims, i, j and the score, and it may load kernel
    arguments at indices of those. A row whose scores are all -inf is NaN, as in
    torch's softmax, or 0 with `zero_masked_rows` (torch's `_safe_softmax`, which
    `F.scaled_dot_product_attention` uses). `causal c` masks more: every score with
    `j > i + c` is -inf whatever the region gives (`causal 0`: a key after its query,
    torch's `tril` mask and `is_causal`); raise-attention writes it where the region
    already masks those scores, so that the tiler can skip the key blocks it hides.
    q, k, v and out have one element type;
    with 16-bit data the scores and the softmax are f32 and the weights are rounded to
    the data type for the product with v (summed in f32, rounded once for out).
    raise-attention writes it for the matmul-softmax-matmul chains users write; the
    tiler makes it one flash-attention kernel (an online softmax over a sequential
    grid dim of key blocks)."""

    name = "ta.attention"

    batch = prop_def(DenseArrayBase[I64])
    sizes = prop_def(DenseArrayBase[I64])
    q_map = prop_def(AffineMapAttr)
    k_map = prop_def(AffineMapAttr)
    v_map = prop_def(AffineMapAttr)
    out_map = prop_def(AffineMapAttr)
    zero_masked_rows = opt_prop_def(UnitAttr)
    causal = opt_prop_def(IntegerAttr[I64])
    q = operand_def(MemRefType)
    k = operand_def(MemRefType)
    v = operand_def(MemRefType)
    out = operand_def(MemRefType)
    score = region_def("single_block")

    traits = traits_def(HasParent(KernelOp), MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "`batch` $batch `sizes` $sizes `q` $q `[` $q_map `]` `k` $k `[` $k_map `]` "
        "`v` $v `[` $v_map `]` `out` $out `[` $out_map `]` "
        "(`zero_masked_rows` $zero_masked_rows^)? (`causal` $causal^)? attr-dict "
        "`:` type($q) `,` type($k) `,` type($v) `,` type($out) `score` $score"
    )

    # The dims each operand may vary along, by name: b (every batch dim), i, j, d, e.
    USES: ClassVar[dict[str, frozenset[str]]] = {
        "q": frozenset("bid"),
        "k": frozenset("bjd"),
        "v": frozenset("bje"),
        "out": frozenset("bie"),
    }

    def __init__(
        self,
        batch: Sequence[int],
        sizes: Sequence[int],
        operands: Mapping[str, tuple[SSAValue, AffineMapAttr]],
        score: Region,
        zero_masked_rows: bool = False,
        causal: int | None = None,
    ):
        super().__init__(
            operands=[operands[n][0] for n in ("q", "k", "v", "out")],
            properties={
                "batch": DenseArrayBase.from_list(i64, list(batch)),
                "sizes": DenseArrayBase.from_list(i64, list(sizes)),
                **{f"{n}_map": operands[n][1] for n in ("q", "k", "v", "out")},
                **({"zero_masked_rows": UnitAttr()} if zero_masked_rows else {}),
                **({"causal": IntegerAttr(causal, i64)} if causal is not None else {}),
            },
            regions=[score],
        )

    @property
    def batch_extents(self) -> tuple[int, ...]:
        return self.batch.get_values()  # type: ignore[return-value]

    @property
    def causal_offset(self) -> int | None:
        """c of `causal c` (scores with j > i + c are -inf), or None."""
        return None if self.causal is None else self.causal.value.data

    @property
    def extents(self) -> tuple[int, ...]:
        """The whole domain: batch dims, then queries, keys, head dim, value dim."""
        return (*self.batch_extents, *self.sizes.get_values())  # type: ignore[misc]

    def dim_names(self) -> list[str]:
        return ["b"] * len(self.batch_extents) + list("ijde")

    def accesses(self) -> dict[str, tuple[SSAValue, AffineMapAttr]]:
        return {
            "q": (self.q, self.q_map),
            "k": (self.k, self.k_map),
            "v": (self.v, self.v_map),
            "out": (self.out, self.out_map),
        }

    def verify_(self) -> None:
        extents = self.extents
        if len(self.sizes) != 4:
            raise VerifyException("ta.attention sizes are (queries, keys, head, value)")
        if any(n <= 0 for n in extents):
            raise VerifyException(f"ta.attention extents must be positive, got {extents}")
        names = self.dim_names()
        bounds = [(0, n - 1) for n in extents]
        for what, (buffer, map) in self.accesses().items():
            mtype = buffer.type
            assert isinstance(mtype, MemRefType)
            m = map.data
            verify_map_arity(m, len(extents), 0, len(mtype.get_shape()), what)
            used = {names[k] for r in m.results for k in dims_of(r)}
            if not used <= self.USES[what]:
                raise VerifyException(
                    f"ta.attention {what} may vary along {sorted(self.USES[what])}, "
                    f"not {sorted(used - self.USES[what])}"
                )
            for k, (b, n) in enumerate(
                zip(map_bounds(m, bounds, []), mtype.get_shape(), strict=True)
            ):
                if b is not None and (b[0] < 0 or b[1] >= n):
                    raise VerifyException(
                        f"ta.attention {what} index #{k} ranges over [{b[0]}, {b[1]}] "
                        f"but the buffer dim is {n}: the access leaves its buffer"
                    )
            roles = WRITABLE_ROLES if what == "out" else READABLE_ROLES
            _verify_buffer_role(buffer, roles, f"ta.attention {what}")
        for what in ("q", "k", "v"):
            t = self.accesses()[what][0].type
            if t.element_type != self.out.type.element_type:  # type: ignore[attr-defined]
                raise VerifyException(
                    "ta.attention q, k, v and out have one element type"
                )
        args = self.score.block.args
        n = len(self.batch_extents) + 2
        if len(args) != n + 1 or any(not isinstance(a.type, IndexType) for a in args[:n]):
            raise VerifyException(
                f"ta.attention score takes {n} indices (batch dims, i, j) and the score"
            )
        last = self.score.block.last_op
        if not isinstance(last, YieldOp) or len(last.values) != 1:
            raise VerifyException("ta.attention score ends in a ta.yield of one value")
        if args[n].type != last.values[0].type:
            raise VerifyException("ta.attention score yields a value of the score's type")

    def view_form_error(self) -> str | None:
        """Why the operands are not in the form the flash-attention tiler takes
        (`attention_view_form_error`; score loads index by single dims or
        constants), or None."""
        error = attention_view_form_error(
            len(self.batch_extents), {w: m.data for w, (_, m) in self.accesses().items()}
        )
        if error is not None:
            return error
        for load in self.score.block.ops:
            if isinstance(load, LoadOp):
                for expr in load.map.data.results:
                    if not isinstance(expr, AffineDimExpr | AffineConstantExpr):
                        return (
                            f"a score load indexes its buffer by {expr}, not by one "
                            "dim or a constant"
                        )
        return None

    def score_extent(self, value: SSAValue) -> int | None:
        """The extent of a score index argument (None for the score itself)."""
        if isinstance(value, BlockArgument) and value.block is self.score.block:
            extents = [*self.batch_extents, *self.sizes.get_values()[:2]]
            return extents[value.index] if value.index < len(extents) else None
        return None


ATTENTION_VIEW_ORDER = {"q": "id", "k": "jd", "v": "je", "out": "ie"}
"""The dims each `ta.attention` operand's view ends in, after all the batch dims."""


def attention_view_form_error(
    batch_rank: int, maps: Mapping[str, AffineMap]
) -> str | None:
    """Why `ta.attention` maps (over batch dims, i, j, d, e) are not views whose dims
    are, in order, the batch dims and then `ATTENTION_VIEW_ORDER`'s: the form the
    flash-attention tiler takes (every block a DMA of whole rows). None if they are."""
    names = ["b"] * batch_rank + list("ijde")
    for what, m in maps.items():
        dims = [e.position if isinstance(e, AffineDimExpr) else None for e in m.results]
        order = ATTENTION_VIEW_ORDER[what]
        tail = [names.index(c) for c in order]
        batch = dims[: len(dims) - len(tail)]
        # q, k and v may leave out batch dims (shared by them: grouped-query heads);
        # out is written once per point
        whole = list(range(batch_rank))
        if (
            dims[len(batch) :] != tail
            or None in batch
            or batch != sorted(set(batch))
            or (what == "out" and batch != whole)
        ):
            return f"attention {what} is not a view of (batch dims, {', '.join(order)})"
    return None


def dims_of(expr: AffineExpr) -> set[int]:
    """The dims an affine expression uses."""
    found: set[int] = set()

    def visit(e: AffineExpr) -> None:
        if isinstance(e, AffineDimExpr):
            found.add(e.position)
        if isinstance(e, AffineBinaryOpExpr):
            visit(e.lhs)
            visit(e.rhs)

    visit(expr)
    return found


IOTA_ARGUMENT = "ta.iota"
"""An argument attribute of `func.func @forward`: the caller passes 0, 1, ..., n - 1
(i32) in this 1-D buffer (the frontend's values of loop indices), so a pass may take
its element k to be k."""


def is_iota_argument(value: SSAValue) -> bool:
    """Whether `value` is a 1-D i32 argument of a `func.func` marked `ta.iota`."""
    if not isinstance(value, BlockArgument):
        return False
    owner = value.block.parent_op()
    t = value.type
    return (
        isinstance(owner, func.FuncOp)
        and owner.arg_attrs is not None
        and IOTA_ARGUMENT in owner.arg_attrs.data[value.index].data
        and isinstance(t, MemRefType)
        and t.get_num_dims() == 1
        and t.element_type == i32
    )


def launches_by_kernel(module: Operation) -> dict[str, list[LaunchOp]]:
    """The launches of every kernel, by kernel name. Only host code launches, so kernel
    bodies (most of the module's ops) are not walked; a pass that asks for many
    kernels' launches calls this once (once per kernel made passes quadratic in
    program size)."""
    launches: dict[str, list[LaunchOp]] = {}
    for region in module.regions:
        for top in region.ops:
            if isinstance(top, KernelOpBase):
                continue
            for op in top.walk():
                if isinstance(op, LaunchOp):
                    launches.setdefault(op.callee.string_value(), []).append(op)
    return launches


def kernel_launches(module: Operation, kernel: KernelOpBase) -> list[LaunchOp]:
    """The launches of `kernel` (see `launches_by_kernel`)."""
    return launches_by_kernel(module).get(kernel.sym_name.data, [])


def iota_bound_arguments(
    kernel: KernelOp, launches: Sequence[LaunchOp] | None = None
) -> set[BlockArgument]:
    """The kernel's arguments that every launch of it binds to an iota argument of
    @forward (`is_iota_argument`) as it is, a 1-D buffer, not a view: element k holds
    k there too. `launches`: the kernel's, when the caller has them."""
    if launches is None:
        module = kernel.parent_op()
        launches = kernel_launches(module, kernel) if module is not None else []
    return {
        a
        for a in kernel.body.block.args
        if launches
        and all(
            is_iota_argument(root_buffer(launch.args[a.index]))
            and launch.args[a.index].type == root_buffer(launch.args[a.index]).type
            for launch in launches
        )
    }


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The value a `ta.attention` score region gives.

    ```mlir
    ta.yield %t : f32
    ```
    """

    name = "ta.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(AttentionOp), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


def varying_dims(
    value: SSAValue, loop: LoopOp, seen: dict[SSAValue, frozenset[int]] | None = None
) -> frozenset[int]:
    """The dims of `loop` a value of its body varies along: its loads' indices' dims
    and symbols', and the loop variables it computes from (`seen`: those known)."""
    seen = {} if seen is None else seen
    if value in seen:
        return seen[value]
    if isinstance(value, BlockArgument):
        return frozenset({value.index} if value.owner is loop.body.block else ())
    owner = value.owner
    if isinstance(owner, LoadOp):  # the dims its map uses, and its symbols'
        used = owner.map.data.used_dims()
        operands = [d for k, d in enumerate(owner.dims) if k in used]
        operands += list(owner.symbols)
    else:
        operands = list(owner.operands)  # type: ignore[union-attr]
    found: frozenset[int] = frozenset()
    for operand in operands:
        found |= varying_dims(operand, loop, seen)
    seen[value] = found
    return found


def value_dims(
    value: SSAValue, loop: LoopOp, seen: dict[SSAValue, frozenset[int]] | None = None
) -> frozenset[int]:
    """The loop dims a value of the body varies along as a value: as `varying_dims`,
    but a reduction's result is the same along the dims it reduces (a row's max
    varies along the row dim only)."""
    seen = {} if seen is None else seen
    if value in seen:
        return seen[value]
    owner = value.owner
    if isinstance(owner, ReduceOp):
        found = value_dims(owner.value, loop, seen) - set(owner.reduced_dims(loop))
    elif isinstance(owner, Operation) and not isinstance(owner, LoadOp):
        found = frozenset().union(*(value_dims(o, loop, seen) for o in owner.operands))
    else:
        found = varying_dims(value, loop)
    seen[value] = found
    return found


def _enclosing_loop(op: Operation) -> LoopOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, LoopOp):
        parent = parent.parent_op()
    return parent


def _loop_extent(value: SSAValue) -> int | None:
    if not isinstance(value, BlockArgument):
        return None
    owner = value.block.parent_op()
    if isinstance(owner, LoopOp):
        return owner.extents[value.index]
    if isinstance(owner, AttentionOp):
        return owner.score_extent(value)
    return None


def _verify_dims_are_loop_vars(dims: Sequence[SSAValue], what: str) -> None:
    for i, d in enumerate(dims):
        if _loop_extent(d) is None:
            raise VerifyException(
                f"{what} dim operand #{i} must be a variable of an enclosing ta.loop"
            )


def root_buffer(value: SSAValue) -> SSAValue:
    """The buffer a (possibly reshaped) buffer value is a view of."""
    while isinstance(value.owner, ReshapeOp):
        value = value.owner.source
    return value


def _verify_buffer_role(buffer: SSAValue, allowed: frozenset[ArgRole], what: str):
    root = root_buffer(buffer)
    if not isinstance(root, BlockArgument) or not isinstance(
        kernel := root.block.parent_op(), KernelOp
    ):
        raise VerifyException(
            f"{what} buffer must be a kernel argument or a ta.reshape of one"
        )
    role = kernel.role_of(root)
    if role not in allowed:
        raise VerifyException(
            f"{what} buffer is kernel argument #{root.index} with role '{role}'; "
            "expected " + " or ".join(f"'{r}'" for r in sorted(allowed))
        )


def _verify_access(
    buffer: SSAValue,
    map: AffineMapAttr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
    what: str,
) -> MemRefType:
    mtype = buffer.type
    assert isinstance(mtype, MemRefType)  # guaranteed by the operand constraint
    shape = mtype.get_shape()
    verify_map_arity(map.data, len(dims), len(symbols), len(shape), what)
    _verify_dims_are_loop_vars(dims, what)
    bounds = map_bounds(
        map.data, loop_bounds_of(dims, _loop_extent), [None] * len(symbols)
    )
    for k, (b, n) in enumerate(zip(bounds, shape, strict=True)):
        if b is not None and (b[0] < 0 or b[1] >= n):
            raise VerifyException(
                f"{what} index #{k} ranges over [{b[0]}, {b[1]}] but the buffer "
                f"dim is {n}: the access leaves its buffer"
            )
    return mtype


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read one element of a buffer at an affine index.

    ```mlir
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    %e = ta.load %table[affine_map<(d0)[s0] -> (s0 * 64 + d0)>](%d)[%row] : memref<64000xf32>
    ```

    Dims are loop variables; symbols are data-dependent index values (an indirect
    access). The map gives one result per buffer dim.
    """

    name = "ta.load"

    T: ClassVar = VarConstraint("T", AnyAttr())
    buffer = operand_def(MemRefType.constr(T))
    dims = var_operand_def(IndexType)
    symbols = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def(T)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasAncestor(LoopOp, AttentionOp), MemoryReadEffect())
    assembly_format = (
        "$buffer `[` $map `]` `` `(` $dims `)` (`` `[` $symbols^ `]`)? attr-dict "
        "`:` type($buffer)"
    )

    def __init__(
        self,
        buffer: SSAValue,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        symbols: Sequence[SSAValue] = (),
    ):
        assert isinstance(buffer.type, MemRefType)
        super().__init__(
            operands=[buffer, dims, symbols],
            properties={"map": map},
            result_types=[buffer.type.element_type],
        )

    def verify_(self) -> None:
        # The result type is the buffer's element type by the operand constraints.
        _verify_access(self.buffer, self.map, self.dims, self.symbols, "load")
        strategy = self.attributes.get(GATHER_ATTR)
        if strategy is not None and not isinstance(strategy, GatherStrategyAttr):
            raise VerifyException(
                f"'{GATHER_ATTR}' must be a #ta<gather_strategy ...>, got {strategy}"
            )
        _verify_buffer_role(self.buffer, READABLE_ROLES, "loaded")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write one element of a buffer at an affine index, or combine it with what is there.

    ```mlir
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    ta.store %g, %acc[affine_map<(d0, d1)[s0] -> (s0 * 64 + d1)>](%i, %j)[%row]
        accumulate <sum> : memref<64000xf32>
    ```

    Dims are loop variables; symbols are data-dependent index values (a scatter). The
    loop's points store in row-major order: where two points store to one element the
    later one wins. With `accumulate <sum|prod|max|min>` each point instead combines its
    value with the element (`buf[at] = buf[at] + v`), so points that reach one element
    all count, in any order (a scatter-add: an embedding's or a gather's backward). An
    accumulating store reads its buffer, which must be `inout`; no Pallas idiom covers
    one, so the tiler runs its kernel on XLA.
    """

    name = "ta.store"

    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    buffer = operand_def(MemRefType.constr(T))
    dims = var_operand_def(IndexType)
    symbols = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    accumulate = opt_prop_def(TaReductionKindAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(HasAncestor(LoopOp), MemoryWriteEffect())
    assembly_format = (
        "$value `,` $buffer `[` $map `]` `` `(` $dims `)` (`` `[` $symbols^ `]`)? "
        "(`accumulate` ` ` `<` $accumulate^ `>`)? attr-dict `:` type($buffer)"
    )

    def __init__(
        self,
        value: SSAValue,
        buffer: SSAValue,
        map: AffineMapAttr,
        dims: Sequence[SSAValue],
        symbols: Sequence[SSAValue] = (),
        accumulate: ReductionKind | str | None = None,
    ):
        super().__init__(
            operands=[value, buffer, dims, symbols],
            properties={
                "map": map,
                "accumulate": None
                if accumulate is None
                else TaReductionKindAttr(ReductionKind(accumulate)),
            },
        )

    @property
    def combine(self) -> ReductionKind | None:
        """How the store combines with what is there (`accumulate`), or None."""
        return None if self.accumulate is None else self.accumulate.data

    def verify_(self) -> None:
        # The value's type is the buffer's element type by the operand constraints.
        _verify_access(self.buffer, self.map, self.dims, self.symbols, "store")
        if self.accumulate is None:
            _verify_buffer_role(self.buffer, WRITABLE_ROLES, "stored")
            return
        kind = self.accumulate.data
        if kind.returns_index:
            raise VerifyException(f"a store cannot accumulate with <{kind}>")
        # It reads what is there: the buffer must come in and go out.
        _verify_buffer_role(self.buffer, frozenset({ArgRole.INOUT}), "accumulated")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Combine a value over the reduction dims of the enclosing `ta.loop`, or over
    some of them (`over`).

    ```mlir
    %s = ta.reduce <sum> %v : f32
    %a = ta.reduce <argmax> %v : f32 -> i32
    %m = ta.reduce <max> %x over [2] : f32
    ```

    Without `over`, the result is defined once per parallel point. With `over [k, ...]`
    (loop dims, each a reduction dim, ascending) it combines over those dims only and
    is defined once per point of the others: a loop `[1] reduce [4096, 1024]` computes
    each row's max `over [2]`, and then sums a value of those maxima `over [1]`, a
    reduction of per-row reductions (cross-entropy's mean loss) in one loop.
    `argmax`/`argmin` give the i32 row-major position in the reduction domain of the
    first extreme value (torch's convention), and reduce over every reduction dim; the
    other kinds keep the operand's type.
    """

    name = "ta.reduce"

    kind = prop_def(TaReductionKindAttr)
    over = opt_prop_def(DenseArrayBase[I64])
    value = operand_def()
    result = result_def()

    traits = traits_def(HasAncestor(LoopOp), Pure())

    def __init__(
        self,
        kind: ReductionKind | str,
        value: SSAValue,
        over: Sequence[int] | None = None,
    ):
        kind = ReductionKind(kind)
        super().__init__(
            operands=[value],
            properties={
                "kind": TaReductionKindAttr(kind),
                "over": None if over is None else DenseArrayBase.from_list(i64, over),
            },
            result_types=[reduction_result_type(kind, value.type)],
        )

    @property
    def partial(self) -> bool:
        """Whether it reduces over some of the loop's reduction dims only (`over`)."""
        return self.over is not None

    def reduced_dims(self, loop: LoopOp | None = None) -> tuple[int, ...]:
        """The loop dims it combines over: `over`, or every reduction dim."""
        if self.over is not None:
            return tuple(self.over.get_values())
        loop = loop or _enclosing_loop(self)
        assert loop is not None, "ta.reduce verifies inside a ta.loop"
        return tuple(range(len(loop.parallel_extents), len(loop.extents)))

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parse_reduction_kind(parser)
        value = parser.parse_unresolved_operand()
        over = None
        if parser.parse_optional_keyword("over") is not None:
            over = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        vtype = parser.parse_type()
        op = cls(kind, parser.resolve_operand(value, vtype), over)
        if parser.parse_optional_punctuation("->") is not None:
            pos = parser.pos
            rtype = parser.parse_type()
            if rtype != op.result.type:
                parser.raise_error(
                    f"ta.reduce <{kind}> gives {op.result.type}, not {rtype}",
                    pos,
                    parser.pos,
                )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" <{self.kind.data}> ")
        printer.print_operand(self.value)
        if self.over is not None:
            printer.print_string(f" over {list(self.over.get_values())}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        if self.result.type != self.value.type:
            printer.print_string(" -> ")
            printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        kind = self.kind.data
        loop = _enclosing_loop(self)
        if loop is None or not loop.reduce_extents:
            raise VerifyException("ta.reduce needs an enclosing ta.loop with reduce dims")
        if self.over is not None:
            over = list(self.over.get_values())
            n_par, rank = len(loop.parallel_extents), len(loop.extents)
            if not over or over != sorted(set(over)):
                raise VerifyException(
                    f"'over' must list reduction dims in ascending order, got {over}"
                )
            if over[0] < n_par or over[-1] >= rank:
                raise VerifyException(
                    f"'over' lists {over}, but the reduction dims of the loop are "
                    f"{list(range(n_par, rank))}"
                )
            if kind.returns_index:
                raise VerifyException(
                    f"<{kind}> reduces over every reduction dim (no 'over')"
                )
            if len(over) == rank - n_par:
                raise VerifyException(
                    f"'over' lists every reduction dim, {over}: leave it out"
                )
        expected = reduction_result_type(kind, self.value.type)
        if self.result.type != expected:
            raise VerifyException(
                f"<{kind}> result must be {expected}, got {self.result.type}"
            )


class ReshapeHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from pallas_ir.dialects.canonicalization.ta import (
            IdentityReshape,
            ReshapeOfReshape,
        )

        return (ReshapeOfReshape(), IdentityReshape())


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """A contiguous reinterpretation of a buffer's storage: a view, no data moves.

    ```mlir
    %x3 = ta.reshape %x : memref<16384xf32> to memref<64x128x2xf32>
    ```

    Free on the host, but on TPU a reshape that changes the last two dims of an
    array is an HBM relayout copy; the lowering and the cost report account for it.
    """

    name = "ta.reshape"

    source = operand_def(MemRefType)
    result = result_def(MemRefType)

    traits = traits_def(Pure(), ReshapeHasCanonicalizationPatterns())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: MemRefType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        verify_same_elements(self.source.type, self.result.type)


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A host-side intermediate buffer between kernels.

    ```mlir
    %tmp = ta.alloc : memref<4096xf32>
    ```
    """

    name = "ta.alloc"

    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        parent = self.parent_op()
        while parent is not None:
            if isinstance(parent, KernelOp):
                raise VerifyException("ta.alloc is host-side: it cannot be in a kernel")
            parent = parent.parent_op()


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a kernel (`ta.kernel`, or `tl.kernel` once tiled) on host buffers, in program
    order.

    ```mlir
    ta.launch @mul(%x, %out) : memref<16384xf32>, memref<8192xf32>
    ```
    """

    name = "ta.launch"

    callee = prop_def(SymbolRefAttr)
    args = var_operand_def(MemRefType)
    assembly_format = "$callee `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, callee: str, args: Sequence[SSAValue]):
        super().__init__(operands=[args], properties={"callee": SymbolRefAttr(callee)})

    def verify_(self) -> None:
        kernel = lookup_symbol(self, self.callee)
        if not isinstance(kernel, KernelOpBase):  # ta.kernel, or tl.kernel after `tile`
            raise VerifyException(
                f"'{self.callee.string_value()}' is not a kernel (ta.kernel or tl.kernel)"
            )
        expected = [a.type for a in kernel.body.block.args]
        got = [a.type for a in self.args]
        if expected != got:
            raise VerifyException(
                f"argument types {', '.join(map(str, got))} do not match kernel "
                f"@{kernel.sym_name.data}'s {', '.join(map(str, expected))}"
            )
        parent = self.parent_op()
        while parent is not None:
            if isinstance(parent, KernelOp):
                raise VerifyException("ta.launch is host-side: it cannot be in a kernel")
            parent = parent.parent_op()


TensorAccess = Dialect(
    "ta",
    [
        KernelOp,
        LoopOp,
        LoadOp,
        StoreOp,
        ReduceOp,
        ReshapeOp,
        AllocOp,
        LaunchOp,
        LibraryCallOp,
        AttentionOp,
        YieldOp,
    ],
    [
        TaArgRoleAttr,
        LibraryFnAttr,
        TaReductionKindAttr,
        GatherStrategyAttr,
        KernelTargetAttr,
        XlaAccessAttr,
    ],
)


def matmul_dims(
    xs: AbstractSet[int],
    ys: AbstractSet[int],
    reduce_dims: Sequence[int],
    integer: bool = False,
) -> tuple[int | None, int, int, int] | None:
    """(batch, m, n, k) when factors varying along the loop dims `xs` and `ys` multiply
    an (m, k) by a (k, n) tile, both also along at most one batch dim (None without),
    summed over the reduction dims: a matrix product, which the tiler makes a
    `tl.dot`. Both factors vary along every reduction dim; several are one k, merged
    row-major (an attention output read as (b, h, t, d) times a weight read as (n, h,
    d), summed over h and d), and `k` names the last. Likewise m may be several dims
    only the left factor varies along, merged row-major, and `m` names the last (a
    head-split `x.view(b, t, h, d).transpose(1, 2) @ w`: rows (h, t)). An `integer`
    product takes one reduction dim and one row dim (Mosaic's dot takes floats, so an
    integer matrix product runs on XLA; one over several dims the VPU multiplies out
    and sums, as before they merged). A factor that varies along no dim of its own (a
    row times a weight vector, summed) is no matrix product."""
    if not reduce_dims or any(l not in xs or l not in ys for l in reduce_dims):
        return None
    k = reduce_dims[-1]
    batch = (xs & ys) - set(reduce_dims)
    ms, ns = xs - ys, ys - xs
    if integer and (len(reduce_dims) > 1 or len(ms) > 1):
        return None
    if not ms or len(ns) != 1 or len(batch) > 1:
        return None
    (n,) = ns
    return (next(iter(batch), None), max(ms), n, k)


def has_partial_reductions(loop: LoopOp) -> bool:
    """Whether the loop reduces over some of its reduction dims only (`ta.reduce ...
    over`): per-row reductions reduced again."""
    return any(isinstance(op, ReduceOp) and op.partial for op in loop.body.block.ops)


def contraction(op: Operation) -> Operation | None:
    """The product a `ta.reduce <sum>` sums, when that product has no other use: a
    candidate for a matrix product."""
    if (
        not isinstance(op, ReduceOp)
        or ReductionKind(op.kind.data) != ReductionKind.SUM
        or op.partial
    ):
        return None
    mul = op.value.owner
    if (
        not isinstance(mul, arith.MulfOp | arith.MuliOp)
        or len(list(mul.result.uses)) != 1
    ):
        return None
    return mul
