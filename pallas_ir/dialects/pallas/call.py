"""`pallas.call` (one `pl.pallas_call`, its syntax and its block-spec checks) and
`pallas.xla_call` (a host call of a kernel that runs as XLA).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    IsolatedFromAbove,
    NoTerminator,
)
from xdsl.utils.exceptions import VerifyException

from pallas_ir.dialects import xla
from pallas_ir.dialects.common import (
    Interval,
    map_bounds,
    parse_optional_attributes_keyword,
)
from pallas_ir.dialects.pallas.attributes import (
    BlockSpecAttr,
    CostEstimateAttr,
    DimensionSemantics,
    DimensionSemanticsAttr,
    MemorySpace,
    RefType,
)
from pallas_ir.symbols import lookup_symbol
from pallas_ir.tpu_rules import (
    MAX_ELEMENT_BITS,
    SMEM_BYTES,
    block_shape_error,
)


def _bitwidth(t: Attribute) -> int | None:
    if isinstance(t, IntegerType):
        return t.width.data
    width = getattr(t, "bitwidth", None)
    return width if isinstance(width, int) else None


_CALL_CLAUSES = ("grid", "prefetch", "in", "out", "semantics", "scratch", "aliases")
"""Keyword clauses of `pallas.call`, in print order."""


def _parse_block_spec(parser: Parser) -> Attribute:
    """One entry of an `in`/`out` clause; a non-spec is rejected where it is written."""
    pos = parser.pos
    spec = parser.parse_attribute()
    if not isinstance(spec, BlockSpecAttr):
        parser.raise_error(f"expected a #pallas.block_spec, got {spec}", pos, parser.pos)
    return spec


def _parse_scratch_ref(parser: Parser) -> Attribute:
    pos = parser.pos
    ref = parser.parse_type()
    if not isinstance(ref, RefType):
        parser.raise_error(
            f"scratch shapes are !pallas.ref types, got {ref}", pos, parser.pos
        )
    return ref


@irdl_op_definition
class CallOp(IRDLOperation):
    """One `pl.pallas_call`.

    ```mlir
    %o = pallas.call @add(%x, %y) grid [4, 2]
        in [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>,
            #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
        out [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
        semantics [parallel, parallel]
        attributes {cost_estimate = #pallas.cost_estimate<...>, vmem_limit_bytes = 33554432}
        : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
        kernel(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: ..., %o_ref: ...) {
      ...
    }
    ```

    Optional clauses: `prefetch N` (the first N operands are scalar-prefetch arrays,
    whole in SMEM, with no block spec), `scratch [!pallas.ref<...>, ...]` and
    `aliases [0 -> 0]` (input index to output index). The kernel's arguments are, in
    order: the prefetch refs, one ref per input, one per output, then the scratch refs.
    """

    name = "pallas.call"

    kernel_name = prop_def(StringAttr)
    grid = prop_def(DenseArrayBase[I64])
    in_specs = prop_def(ArrayAttr[BlockSpecAttr])
    out_specs = prop_def(ArrayAttr[BlockSpecAttr])
    num_scalar_prefetch = prop_def(IntegerAttr[I64])
    dimension_semantics = prop_def(ArrayAttr[DimensionSemanticsAttr])
    scratch_shapes = prop_def(ArrayAttr[RefType])
    input_output_aliases = prop_def(DenseArrayBase[I64])
    cost_estimate = opt_prop_def(CostEstimateAttr)
    vmem_limit_bytes = opt_prop_def(IntegerAttr[I64])

    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator())

    def __init__(
        self,
        kernel_name: str,
        args: Sequence[SSAValue],
        result_types: Sequence[TensorType],
        grid: Sequence[int],
        in_specs: Sequence[BlockSpecAttr],
        out_specs: Sequence[BlockSpecAttr],
        dimension_semantics: Sequence[DimensionSemantics | str],
        num_scalar_prefetch: int = 0,
        scratch_shapes: Sequence[RefType] = (),
        input_output_aliases: Sequence[tuple[int, int]] = (),
        cost_estimate: CostEstimateAttr | None = None,
        vmem_limit_bytes: int | None = None,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block())
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={
                "kernel_name": StringAttr(kernel_name),
                "grid": DenseArrayBase.from_list(i64, grid),
                "in_specs": ArrayAttr(in_specs),
                "out_specs": ArrayAttr(out_specs),
                "num_scalar_prefetch": IntegerAttr(num_scalar_prefetch, i64),
                "dimension_semantics": ArrayAttr(
                    [
                        DimensionSemanticsAttr(DimensionSemantics(s))
                        for s in dimension_semantics
                    ]
                ),
                "scratch_shapes": ArrayAttr(scratch_shapes),
                "input_output_aliases": DenseArrayBase.from_list(
                    i64, [x for pair in input_output_aliases for x in pair]
                ),
                "cost_estimate": cost_estimate,
                "vmem_limit_bytes": None
                if vmem_limit_bytes is None
                else IntegerAttr(vmem_limit_bytes, i64),
            },
            regions=[body],
        )

    # -- convenient views -----------------------------------------------------------

    @property
    def n_prefetch(self) -> int:
        return self.num_scalar_prefetch.value.data

    @property
    def prefetch_args(self) -> Sequence[SSAValue]:
        return self.args[: self.n_prefetch]

    @property
    def block_args(self) -> Sequence[SSAValue]:
        return self.args[self.n_prefetch :]

    @property
    def aliases(self) -> list[tuple[int, int]]:
        flat = self.input_output_aliases.get_values()
        return list(zip(flat[::2], flat[1::2]))

    def expected_kernel_arg_types(self) -> list[Attribute]:
        types: list[Attribute] = []
        for a in self.prefetch_args:
            assert isinstance(a.type, TensorType)
            types.append(
                RefType(a.type.get_shape(), a.type.element_type, MemorySpace.SMEM)
            )
        for value, spec in (
            *zip(self.block_args, self.in_specs.data),
            *zip(self.outs, self.out_specs.data),
        ):
            t = value.type
            assert isinstance(t, TensorType)
            if spec.space == MemorySpace.ANY:
                types.append(RefType(t.get_shape(), t.element_type, MemorySpace.ANY))
            else:
                types.append(RefType(spec.ref_shape(), t.element_type, spec.space))
        types.extend(self.scratch_shapes.data)
        return types

    # -- syntax -------------------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        name = parser.parse_symbol_name()
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        grid: list[int] = []
        in_specs: list[Attribute] = []
        out_specs: list[Attribute] = []
        semantics: list[DimensionSemantics] = []
        scratch: list[Attribute] = []
        aliases: list[tuple[int, int]] = []
        n_prefetch = 0
        while True:
            clause = parser.parse_optional_keyword_in(_CALL_CLAUSES)
            if clause is None:
                break
            if clause == "grid":
                grid = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_integer
                )
            elif clause == "in":
                in_specs = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_block_spec(parser)
                )
            elif clause == "out":
                out_specs = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_block_spec(parser)
                )
            elif clause == "prefetch":
                n_prefetch = parser.parse_integer(
                    allow_boolean=False, allow_negative=False
                )
            elif clause == "semantics":
                semantics = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: parser.parse_str_enum(DimensionSemantics),
                )
            elif clause == "scratch":
                scratch = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_scratch_ref(parser)
                )
            else:

                def alias() -> tuple[int, int]:
                    i = parser.parse_integer(allow_boolean=False, allow_negative=False)
                    parser.parse_punctuation("->")
                    o = parser.parse_integer(allow_boolean=False, allow_negative=False)
                    return i, o

                aliases = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, alias
                )
        attrs = parse_optional_attributes_keyword(parser)
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        if len(ftype.inputs.data) != len(operands):
            parser.raise_error(
                f"{len(operands)} operands but {len(ftype.inputs.data)} operand types",
                pos,
                parser.pos,
            )
        args = [
            parser.resolve_operand(o, t)
            for o, t in zip(operands, ftype.inputs.data, strict=True)
        ]
        parser.parse_keyword("kernel")
        kargs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        body = parser.parse_region(kargs)
        props: dict[str, Attribute] = {}
        for key in ("cost_estimate", "vmem_limit_bytes"):
            if key in attrs:
                props[key] = attrs.pop(key)
        op = cls(
            name.data,
            args,
            list(ftype.outputs.data),  # type: ignore[arg-type]
            grid,
            in_specs,  # type: ignore[arg-type]
            out_specs,  # type: ignore[arg-type]
            semantics,
            n_prefetch,
            scratch,  # type: ignore[arg-type]
            aliases,
            body=body,
        )
        op.properties.update(props)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.kernel_name.data)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(")")
        with printer.indented():
            printer.print_string(" grid [")
            printer.print_list(
                self.grid.get_values(), lambda n: printer.print_string(str(n))
            )
            printer.print_string("]")
            if self.n_prefetch:
                printer.print_string(f" prefetch {self.n_prefetch}")
            for keyword, specs in (("in", self.in_specs), ("out", self.out_specs)):
                printer.print_string("\n")
                printer.print_string(f"{keyword} [")
                printer.print_list(specs.data, printer.print_attribute)
                printer.print_string("]")
            printer.print_string("\n")
            printer.print_string("semantics [")
            printer.print_list(
                self.dimension_semantics.data,
                lambda s: printer.print_string(s.data.value),
            )
            printer.print_string("]")
            if self.scratch_shapes.data:
                printer.print_string(" scratch [")
                printer.print_list(self.scratch_shapes.data, printer.print_attribute)
                printer.print_string("]")
            if self.aliases:
                printer.print_string(" aliases [")
                printer.print_list(
                    self.aliases, lambda a: printer.print_string(f"{a[0]} -> {a[1]}")
                )
                printer.print_string("]")
            extra: dict[str, Attribute] = dict(self.attributes)
            if self.cost_estimate is not None:
                extra["cost_estimate"] = self.cost_estimate
            if self.vmem_limit_bytes is not None:
                extra["vmem_limit_bytes"] = self.vmem_limit_bytes
            if extra:
                printer.print_string("\n")
                printer.print_string("attributes ")
                printer.print_attr_dict(extra)
            printer.print_string("\n")
            printer.print_string(": (")
            printer.print_list([a.type for a in self.args], printer.print_attribute)
            printer.print_string(") -> ")
            outs = [r.type for r in self.outs]
            if len(outs) == 1:
                printer.print_attribute(outs[0])
            else:
                printer.print_string("(")
                printer.print_list(outs, printer.print_attribute)
                printer.print_string(")")
            printer.print_string("\n")
            printer.print_string("kernel(")
            printer.print_list(self.body.block.args, printer.print_block_argument)
            printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False)

    # -- checks -------------------------------------------------------------------

    def verify_(self) -> None:
        grid = self.grid.get_values()
        n_pre = self.n_prefetch
        if any(n <= 0 for n in grid):
            raise VerifyException("grid extents must be positive")
        if not 0 <= n_pre <= len(self.args):
            raise VerifyException(f"prefetch {n_pre} but only {len(self.args)} operands")
        if len(self.dimension_semantics.data) != len(grid):
            raise VerifyException(
                f"grid has {len(grid)} dims but dimension_semantics has "
                f"{len(self.dimension_semantics.data)} entries"
            )
        if len(self.in_specs.data) != len(self.args) - n_pre:
            raise VerifyException(
                f"{len(self.args) - n_pre} block operands but "
                f"{len(self.in_specs.data)} in_specs"
            )
        if len(self.out_specs.data) != len(self.outs):
            raise VerifyException(
                f"{len(self.outs)} results but {len(self.out_specs.data)} out_specs"
            )
        smem = 0
        for i, a in enumerate(self.prefetch_args):
            t = a.type
            assert isinstance(t, TensorType)
            if t.element_type != i32:
                raise VerifyException(
                    f"scalar-prefetch operand #{i} must be i32 (SMEM holds 32-bit "
                    f"scalars), got {t.element_type}"
                )
            smem += 4 * t.element_count()
        if smem > SMEM_BYTES:
            raise VerifyException(
                f"scalar-prefetch operands take {smem} bytes; SMEM holds {SMEM_BYTES}"
            )
        for k, (value, spec) in enumerate(
            [
                *zip(self.block_args, self.in_specs.data),
                *zip(self.outs, self.out_specs.data),
            ]
        ):
            what = (
                f"in_specs[{k}]"
                if k < len(self.in_specs.data)
                else f"out_specs[{k - len(self.in_specs.data)}]"
            )
            self._verify_spec(what, value, spec, len(grid))
        for i, o in self.aliases:
            if not (n_pre <= i < len(self.args)) or not (0 <= o < len(self.outs)):
                raise VerifyException(f"alias {i} -> {o} names no block operand/result")
            if self.args[i].type != self.outs[o].type:
                raise VerifyException(
                    f"alias {i} -> {o} joins {self.args[i].type} and {self.outs[o].type}"
                )
        for k, ref in enumerate(self.scratch_shapes.data):
            if ref.space == MemorySpace.ANY:
                raise VerifyException(
                    f"scratch_shapes[{k}] is in memory space any; scratch lives in vmem or smem"
                )
            if ref.space == MemorySpace.SEMAPHORE and (
                ref.get_shape() or ref.element_type != i32
            ):
                raise VerifyException(
                    f"scratch_shapes[{k}]: a DMA semaphore is a rank-0 i32 ref"
                )
        if self.vmem_limit_bytes is not None and self.vmem_limit_bytes.value.data <= 0:
            raise VerifyException("vmem_limit_bytes must be positive")
        got = [a.type for a in self.body.block.args]
        want = self.expected_kernel_arg_types()
        if got != want:
            raise VerifyException(
                "kernel arguments must be ("
                + ", ".join(map(str, want))
                + "), got ("
                + ", ".join(map(str, got))
                + ")"
            )

    def _verify_spec(
        self, what: str, value: SSAValue, spec: BlockSpecAttr, grid_rank: int
    ) -> None:
        t = value.type
        assert isinstance(t, TensorType)
        bits = _bitwidth(t.element_type)
        if bits is not None and bits > MAX_ELEMENT_BITS:
            raise VerifyException(
                f"{what}: TPU kernels have no 64-bit types; got {t.element_type}"
            )
        if spec.space == MemorySpace.ANY:
            return
        if len(spec.shape) != t.get_num_dims():
            raise VerifyException(
                f"{what}: the block spec has rank {len(spec.shape)} but its operand "
                f"{t} has rank {t.get_num_dims()}"
            )
        if spec.map.num_dims != grid_rank:
            raise VerifyException(
                f"{what}: the index map takes {spec.map.num_dims} grid indices but "
                f"the grid has {grid_rank} dims"
            )
        for p, m in spec.prefetch:
            if p >= self.n_prefetch:
                raise VerifyException(
                    f"{what}: binds prefetch{p} but the call has "
                    f"{self.n_prefetch} prefetch operands"
                )
            pt = self.args[p].type
            assert isinstance(pt, TensorType)
            if len(m.results) != pt.get_num_dims():
                raise VerifyException(
                    f"{what}: prefetch{p} has rank {pt.get_num_dims()} but its "
                    f"binding gives {len(m.results)} indices"
                )
        if (err := block_shape_error(spec.shape, t.get_shape(), bits or 32)) is not None:
            raise VerifyException(f"{what}: {err}")
        # Block indices must name blocks of the array at every grid point (interpret
        # mode clamps a stray index silently; on a TPU it reads the wrong memory).
        grid = [(0, n - 1) for n in self.grid.get_values()]
        symbols: list[Interval | None] = [None] * spec.map.num_symbols
        for k, (b, size, n) in enumerate(
            zip(map_bounds(spec.map, grid, symbols), spec.shape, t.get_shape())
        ):
            if spec.element:
                # Element offsets: every window lies inside the array.
                if b is not None and (b[0] < 0 or b[1] + (size or 1) > n):
                    raise VerifyException(
                        f"{what}: element offset {k} ranges over [{b[0]}, {b[1]}] but "
                        f"windows of {size} must fit in the dim of {n}"
                    )
                continue
            blocks = -(-n // (size or 1))
            if b is not None and (b[0] < 0 or b[1] >= blocks):
                raise VerifyException(
                    f"{what}: block index {k} ranges over [{b[0]}, {b[1]}] but the "
                    f"operand has {blocks} blocks of {size or 1} along dim {k}"
                )


@irdl_op_definition
class XlaCallOp(IRDLOperation):
    """A call of an `xla.func` from @forward: it runs as XLA (a jnp function), not as a
    Pallas kernel.

    ```mlir
    %g = pallas.xla_call @gather_0(%idx, %emb)
        : (tensor<64xi64>, tensor<1000x256xf32>) -> tensor<64x256xf32>
    ```

    The operands and results have exactly the function's types: the arrays as @forward
    holds them (the function reads and writes them as its kernel's buffers, the same
    elements, so no relayout is needed).
    """

    name = "pallas.xla_call"

    callee = prop_def(SymbolRefAttr)
    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $outs)"

    def __init__(
        self, callee: str, args: Sequence[SSAValue], result_types: Sequence[TensorType]
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": SymbolRefAttr(callee)},
        )

    def function(self) -> xla.FuncOp | None:
        found = lookup_symbol(self, self.callee)
        return found if isinstance(found, xla.FuncOp) else None

    def verify_(self) -> None:
        function = self.function()
        if function is None:
            raise VerifyException(f"{self.callee} is not an xla.func")
        function.verify_call(self.args.types, self.outs.types)
