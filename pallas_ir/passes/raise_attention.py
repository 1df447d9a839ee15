"""raise-attention: the matmul-softmax-matmul chains users write, as one `ta.attention`.

After the ta passes, `softmax(q @ k^T * scale + mask) @ v` (and
`F.scaled_dot_product_attention`, traced as its math form) is four kinds of kernel:

- P, a contraction: `S[b, i, j] = sum_d Q[b, i, d] * K[b, j, d]` (SDPA scales Q and K
  each by a constant inside it: S times both constants at the head of the region);
- the row statistics: `M = max_j F(S)` and `L = sum_j exp(F(S) - max_j F(S))`, where
  F is element-wise in S and the loop indices (the scale, a mask through an iota, a
  padding mask's row), and for SDPA `T = max_j (F(S) != -inf)`;
- the consumer C: `O[b, i, e] = sum_j exp(F(S) - M) / L * V[b, j, e]`, for SDPA with the
  weights zeroed where `T == 0` (`_safe_softmax`: `zero_masked_rows`).

They become one kernel holding one `ta.attention` (F is its score region), which the
tiler makes a flash-attention kernel: S, M and L never reach HBM.

The meaning is kept when (each checked; a remark at the consumer's loop says which
failed once its body has the consumer's form):
- S, M and L are intermediates: allocated by @forward, written by one launch each
  (P, the statistics) and read only by the statistics and C;
- every kernel is launched once, P before the statistics before C, and nothing
  launched between P and C writes Q, K, V or what F reads;
- F is the same function of (batch, i, j) in all three kernels: the same ops, the same
  constants, and loads of the same host buffers at the same element, compared through
  the flat index of each load written in S's coordinates (batch, i, j);
- every access is affine with no data-dependent index; S, M and L are f32; q, k, v and
  out are f32, or bf16 with the chain widening q and k for the scores, rounding the
  weights to bf16 and narrowing the sum (the flash kernel rounds its unnormalised
  weights instead: within bf16's precision, not bitwise); and out is a view whose
  dims are (batch dims, then i, e) in that order (`ta.attention_view_form_error`: what
  the tiler takes). When P flattens batch dims C keeps apart, P's factors are read
  through views that split them (leading dims: free);
- q, k and v are loads of views in the same form, (batch dims, then i, d / j, d /
  j, e), where they may leave out batch dims (grouped-query heads), or else each is
  a function of its batch, row and head-dim vars alone, computed ahead (`_Computed`:
  a bias added as the heads are read, a rotary embedding, the heads of a (B, T, H, D)
  layout, a product over several dims) into a buffer of its own in that form by a
  kernel launched where P was; what it reads is not written before C;
- F's loads index their buffers by single dims or constants (`ta.AttentionOp.
  view_form_error`: a bias read at an offset, `b[1:T+1, 3:T+3]`, has no block the
  tiler could start there), in (batch, i, j) order;
- some query and key blocks give every access a legal block, and their step fits
  every chip's default scoped VMEM (`analysis.attention_blocks`: rows of d and e in
  the thousands do not; nor does a bias of T = 100 rows cut from a (1024, 1024)
  table, whose 100-row block is neither whole nor 8-aligned).

A causal mask of loop indices in F (loads of `{ta.iota}` arguments) becomes the op's
`causal c`, and leaves the region where it is F's last step
(`analysis/attention_masks.py`): the tiler skips the key blocks it hides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import LinearExpr, linearize
from pallas_ir.analysis.attention_blocks import attention_blocks_error
from pallas_ir.analysis.attention_masks import causal_bound, without_causal_mask
from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import ArgRole, ReductionKind, find_forward
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.passes.launch_graph import host_root, host_views, launch_counts, the_loop
from pallas_ir.passes.options import CheckedOptionsPass


class _NotRaised(Exception):
    """Why a chain is not raised (the remark's text)."""


def _flat(op: ta.LoadOp | ta.StoreOp) -> LinearExpr:
    """The access's flat element index in its view, as a linear form of the loop vars."""
    if op.symbols:
        raise _NotRaised("an access has a data-dependent index")
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    dims: dict[int, int] = {}
    constant = 0
    stride = 1
    for n, expr in reversed(list(zip(shape, op.map.data.results))):
        lin = linearize(expr)
        if lin is None:
            raise _NotRaised(
                f"an access of {op.buffer.name_hint or 'a buffer'} is not affine"
            )
        for p, c in lin.dims.items():
            var = op.dims[p]
            assert isinstance(var, BlockArgument)
            dims[var.index] = dims.get(var.index, 0) + c * stride
        constant += lin.constant * stride
        stride *= n
    return LinearExpr(dims=dims, constant=constant)


@dataclass
class _Coords:
    """A kernel's loop vars in S's coordinates: the i var, the j var, and each batch
    var's weight in the flattened batch index."""

    i: int
    j: int
    batch: dict[int, int]
    extents: tuple[int, ...]

    def atoms(self, lin: LinearExpr) -> tuple[object, ...]:
        """A flat index in S's coordinates: its constant, the coefficients of i and j,
        and of the batch: of the flattened batch index when every batch var keeps its
        weight (kernels that split the batch differently compare equal), else of each
        batch var by its weight and extent (a padding mask's batch row)."""
        key: dict[str, int] = {}
        parts: dict[int, int] = {}
        for p, c in lin.dims.items():
            if p == self.i:
                key["i"] = c
            elif p == self.j:
                key["j"] = c
            elif p in self.batch:
                parts[p] = c
            else:
                raise _NotRaised("the score reads along a dim other than (batch, i, j)")
        scales = {c // self.batch[p] for p, c in parts.items() if c % self.batch[p] == 0}
        if (
            len(parts) == len(self.batch)
            and len(scales) == 1
            and all(c % self.batch[p] == 0 for p, c in parts.items())
        ):
            batch: object = ("flat", scales.pop())
        else:
            batch = tuple(
                sorted((self.batch[p], self.extents[p], c) for p, c in parts.items())
            )
        return (lin.constant, tuple(sorted(key.items())), batch)


@dataclass(eq=False)
class _Kernel:
    """A launched kernel and its one loop."""

    launch: ta.LaunchOp
    kernel: ta.KernelOp
    loop: ta.LoopOp

    def host(self, buffer: SSAValue) -> SSAValue:
        root = ta.root_buffer(buffer)
        assert isinstance(root, BlockArgument)
        return host_root(self.launch.args[root.index])


@dataclass
class _Chain:
    """What was matched: the kernels, and the values the new kernel is built from."""

    p: _Kernel
    stats: list[_Kernel]
    c: _Kernel
    score: SSAValue  # F in C
    s_load: ta.LoadOp  # S in C
    q: _Factor
    k: _Factor
    v: _Factor
    out: ta.StoreOp
    scales: list[arith.ConstantOp]  # of q and k, in P
    zero_masked_rows: bool
    p_coords: _Coords
    c_coords: _Coords
    sizes: tuple[int, int, int]
    temporaries: list[SSAValue] = field(default_factory=list[SSAValue])


def _owner(value: SSAValue, kind: type[Operation] | tuple[type[Operation], ...]):
    owner = value.owner
    return owner if isinstance(owner, kind) else None


def _widened(value: SSAValue) -> tuple[SSAValue, Attribute | None]:
    """`x` of `extf(x)` and x's type (16-bit data read as f32), else (value, None)."""
    ext = _owner(value, arith.ExtFOp)
    return (ext.input, ext.input.type) if ext is not None else (value, None)


@dataclass
class _Consumer:
    """C's form: one store of `sum_j w * V` (or `V * w`), `w = exp(F - M) / L`, for
    16-bit data `w` rounded to V's type and V and the sum widened and narrowed, and
    for SDPA `w` zeroed by a row test."""

    store: ta.StoreOp
    score: SSAValue
    mload: ta.LoadOp
    lload: ta.LoadOp
    v: SSAValue
    guard: SSAValue | None
    narrow: Attribute | None
    """The 16-bit type of v, the weights and out (None: f32 throughout)."""


def _softmax_product(loop: ta.LoopOp) -> _Consumer | None:
    stores = [o for o in loop.body.block.ops if isinstance(o, ta.StoreOp)]
    if len(stores) != 1 or len(loop.reduce_extents) != 1 or stores[0].combine is not None:
        return None
    value = stores[0].value
    trunc = _owner(value, arith.TruncFOp)
    out_type = trunc.result.type if trunc is not None else None
    red = _owner(trunc.input if trunc is not None else value, ta.ReduceOp)
    if red is None or ReductionKind(red.kind.data) != ReductionKind.SUM:
        return None
    mul = _owner(red.value, arith.MulfOp)
    if mul is None:
        return None
    for x, v in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        v, v_type = _widened(v)
        x, x_wide = _widened(x)
        rounded = _owner(x, arith.TruncFOp) if x_wide is not None else None
        if rounded is not None:
            x = rounded.input
        if len({out_type, v_type, x_wide}) != 1 or (x_wide is not None) != (
            rounded is not None
        ):
            continue  # the weights, v and out rounded alike, or none of them
        guard = None
        select = _owner(x, arith.SelectOp)
        if select is not None and _constant(select.lhs) == 0.0:
            guard, x = select.cond, select.rhs  # _safe_softmax: 0 where all masked
        div = _owner(x, arith.DivfOp)
        exp = _owner(div.lhs, math.ExpOp) if div else None
        sub = _owner(exp.operand, arith.SubfOp) if exp else None
        mload = _owner(sub.rhs, ta.LoadOp) if sub else None
        lload = _owner(div.rhs, ta.LoadOp) if div else None
        if mload and lload and sub:
            return _Consumer(stores[0], sub.lhs, mload, lload, v, guard, out_type)
    return None


def _constant(value: SSAValue) -> float | int | None:
    """A scalar `arith.constant`'s value, or None."""
    const = _owner(value, arith.ConstantOp)
    if const is None or not isinstance(const.value, FloatAttr | IntegerAttr):
        return None
    return const.value.value.data


@dataclass(eq=False)
class _Factor:
    """q or k of P's product, or v of C's: one load of a view (for SDPA's q and k times
    a scalar constant, `scale`), or a value the loop computes (a bias added, a rotary
    embedding), which the rewrite computes into a buffer of its own ahead of the
    attention (`_Computed`)."""

    kernel: _Kernel
    value: SSAValue
    """The factor in the data type (a 16-bit load or value before it is widened)."""
    load: ta.LoadOp | None = None
    scale: arith.ConstantOp | None = None

    def hosts(self) -> set[SSAValue]:
        """The host buffers the factor reads."""
        return {self.kernel.host(x.buffer) for x in _loads_in(self.value)}


def _factor(value: SSAValue, kernel: _Kernel) -> _Factor:
    """A factor of a product: a load, a load times a scalar constant
    (`F.scaled_dot_product_attention` scales q and k each by the scale's root), or a
    computed value (scale and all)."""
    load = _owner(_widened(value)[0], ta.LoadOp)
    if load is not None:
        return _Factor(kernel, load.result, load)
    mul = _owner(value, arith.MulfOp)
    for a, b in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)) if mul else ():
        load, const = _owner(_widened(a)[0], ta.LoadOp), _owner(b, arith.ConstantOp)
        if load is not None and const is not None and _constant(b) is not None:
            return _Factor(kernel, load.result, load, const)
    return _Factor(kernel, _widened(value)[0])


def _all_masked_flag(guard: SSAValue) -> ta.LoadOp | None:
    """The load of T in `T == 0` (or `not (T != 0)`): the consumer's test that a row's
    scores are all -inf, T its row max of `F != -inf`."""
    x = _owner(guard, arith.XOrIOp)
    if x is not None and _constant(x.rhs) in (1, -1):
        cmp = _owner(x.lhs, arith.CmpiOp)
        predicate = "ne"
    else:
        cmp = _owner(guard, arith.CmpiOp)
        predicate = "eq"
    if cmp is None or cmp.predicate.value.data != arith.CMPI_COMPARISON_OPERATIONS.index(
        predicate
    ):
        return None
    if _constant(cmp.rhs) != 0:
        return None
    return _owner(cmp.lhs, ta.LoadOp)


def _unmasked_row_max(value: SSAValue) -> SSAValue | None:
    """F in `max_j ext(not (F == -inf))`: the row flag `_safe_softmax` computes."""
    red = _owner(value, ta.ReduceOp)
    if red is None or ReductionKind(red.kind.data) != ReductionKind.MAX:
        return None
    ext = _owner(red.value, arith.ExtUIOp)
    x = _owner(ext.input, arith.XOrIOp) if ext else None
    if x is None or _constant(x.rhs) not in (1, -1):
        return None
    cmp = _owner(x.lhs, arith.CmpfOp)
    if (
        cmp is None
        or cmp.predicate.value.data != arith.CMPF_COMPARISON_OPERATIONS.index("oeq")
        or _constant(cmp.rhs) != float("-inf")
    ):
        return None
    return cmp.lhs


class _Matcher:
    def __init__(self, module: ModuleOp):
        self.module = module
        forward = find_forward(module)
        assert forward is not None
        self.forward = forward
        self.kernels = {
            k.sym_name.data: k for k in module.ops if isinstance(k, ta.KernelOp)
        }
        self.counts = launch_counts(module)
        self.launches = [o for o in forward.body.block.ops if isinstance(o, ta.LaunchOp)]
        # The launches that may write each host value they are passed, in launch
        # order (one walk, so that asking for a buffer's writers is not a scan).
        self._writing: dict[SSAValue, list[ta.LaunchOp]] = {}
        for launch in self.launches:
            kernel = self.kernels.get(launch.callee.string_value())
            for n, a in enumerate(launch.args):
                if (
                    kernel is None
                    or kernel.role_of(kernel.body.block.args[n]) != ArgRole.IN
                ):
                    writing = self._writing.setdefault(a, [])
                    if not writing or writing[-1] is not launch:
                        writing.append(launch)

    def launched(self, launch: ta.LaunchOp) -> _Kernel | None:
        kernel = self.kernels.get(launch.callee.string_value())
        if kernel is None or kernel.on_xla or self.counts.get(kernel.sym_name.data) != 1:
            return None
        loop = the_loop(kernel)
        if loop is None or any(
            not isinstance(o, ta.LoopOp | ta.ReshapeOp) for o in kernel.body.block.ops
        ):
            return None
        return _Kernel(launch, kernel, loop)

    def writers(self, host: SSAValue) -> list[_Kernel | None]:
        """The launches that may write `host` (None for one that is not a plain kernel)."""
        order = {id(launch): n for n, launch in enumerate(self.launches)}
        writing = {
            id(launch): launch
            for view in host_views(host)
            for launch in self._writing.get(view, [])
        }
        return [self.launched(writing[i]) for i in sorted(writing, key=order.__getitem__)]

    def the_writer(self, host: SSAValue, what: str) -> _Kernel:
        writers = self.writers(host)
        if len(writers) != 1 or writers[0] is None:
            raise _NotRaised(f"{what} is not written by one kernel launched once")
        return writers[0]


def _coords(
    k: _Kernel, s_load: ta.LoadOp | ta.StoreOp, tq: int, tk: int, bh: int
) -> _Coords:
    lin = _flat(s_load)
    i = j = None
    batch: dict[int, int] = {}
    extents = k.loop.extents
    for p, c in lin.dims.items():
        if c == 1 and extents[p] == tk:
            j = p
        elif c == tk and extents[p] == tq:
            i = p
        elif c % (tq * tk) == 0:
            batch[p] = c // (tq * tk)
        else:
            raise _NotRaised("the scores are read other than whole")
    if i is None and tq == 1:  # one query (a decode step): i is a unit var S omits
        unused = [p for p in range(len(k.loop.parallel_extents)) if p not in lin.dims]
        i = max((p for p in unused if extents[p] == 1), default=None)
    span = sum(w * (extents[p] - 1) for p, w in batch.items())
    if i is None or j is None or lin.constant or span != bh - 1:
        raise _NotRaised("the scores are read other than whole")
    return _Coords(i, j, batch, tuple(extents))


def _same(
    a: SSAValue, b: SSAValue, ka: _Kernel, kb: _Kernel, ca: _Coords, cb: _Coords
) -> bool:
    """Whether `a` (in ka) and `b` (in kb) are the same function of (batch, i, j)."""
    oa, ob = a.owner, b.owner
    if not isinstance(oa, Operation) or not isinstance(ob, Operation):
        return False
    if isinstance(oa, ta.LoadOp) and isinstance(ob, ta.LoadOp):
        # (their loops' vars differ in number: compared in S's coordinates)
        return ka.host(oa.buffer) is kb.host(ob.buffer) and ca.atoms(
            _flat(oa)
        ) == cb.atoms(_flat(ob))
    if oa.name != ob.name or len(oa.operands) != len(ob.operands):
        return False
    if isinstance(oa, ta.ReduceOp | ta.StoreOp) or oa.regions:
        return False
    if oa.properties != ob.properties or oa.result_types != ob.result_types:
        return False
    if a.index != b.index:  # type: ignore[attr-defined]
        return False
    return all(
        _same(x, y, ka, kb, ca, cb) for x, y in zip(oa.operands, ob.operands, strict=True)
    )


def _dag_ops(value: SSAValue) -> set[Operation]:
    """The ops that compute `value` (within its block)."""
    found: set[Operation] = set()
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner not in found:
            found.add(owner)
            stack.extend(owner.operands)
    return found


def _loads_in(value: SSAValue, found: list[ta.LoadOp] | None = None) -> list[ta.LoadOp]:
    found = [] if found is None else found
    owner = value.owner
    if isinstance(owner, ta.LoadOp):
        if owner not in found:
            found.append(owner)
    elif isinstance(owner, Operation):
        for o in owner.operands:
            _loads_in(o, found)
    return found


def _stored(k: _Kernel, host: SSAValue) -> ta.StoreOp:
    stores = [
        o
        for o in k.loop.body.block.ops
        if isinstance(o, ta.StoreOp) and k.host(o.buffer) is host
    ]
    if len(stores) != 1:
        raise _NotRaised("a statistic is stored more than once")
    return stores[0]


def _stores_only(k: _Kernel, hosts: list[SSAValue]) -> None:
    """A kernel erased with the chain may write nothing else."""
    for o in k.loop.body.block.ops:
        if isinstance(o, ta.StoreOp) and (
            o.combine is not None or not any(k.host(o.buffer) is h for h in hosts)
        ):
            raise _NotRaised("a kernel of the chain writes more than the chain's buffers")


def match(m: _Matcher, c: _Kernel) -> _Chain | None:
    """The chain whose consumer is `c`, or None when `c` is not a softmax-weighted sum
    (raises `_NotRaised` when it is, but the rest does not hold)."""
    form = _softmax_product(c.loop)
    if form is None:
        return None
    store, score, guard = form.store, form.score, form.guard
    mload, lload = form.mload, form.lload
    loads = _loads_in(score)
    products = []
    for load in loads:
        writers = m.writers(c.host(load.buffer))
        if len(writers) == 1 and writers[0] is not None:
            w = writers[0]
            red = [o for o in w.loop.body.block.ops if isinstance(o, ta.ReduceOp)]
            if len(red) == 1 and ta.contraction(red[0]) is not None:
                products.append((load, w))
    if len(products) != 1:
        raise _NotRaised("the scores are not one matrix product's")
    s_load, p = products[0]
    data = form.narrow or Float32Type()
    if not isinstance(s_load.result.type, Float32Type) or form.v.type != data:
        raise _NotRaised("the scores are not f32, or v's type is not the output's")
    # P: S[b, i, j] = sum_d Q[b, i, d] * K[b, j, d]
    p_store = [o for o in p.loop.body.block.ops if isinstance(o, ta.StoreOp)]
    red = [o for o in p.loop.body.block.ops if isinstance(o, ta.ReduceOp)]
    mul = ta.contraction(red[0])
    assert mul is not None
    q, k = (_factor(o, p) for o in mul.operands)
    v = _factor(form.v, c)
    if any(x.value.type != data for x in (q, k)):
        raise _NotRaised("q and k are not of v's type")
    kept = {p_store[0], red[0], mul, *_dag_ops(mul.lhs), *_dag_ops(mul.rhs)}
    if (
        len(p_store) != 1
        or p_store[0].value is not red[0].result
        or any(
            o not in kept and not _owner(o.results[0], arith.ConstantOp)
            for o in p.loop.body.block.ops
        )
    ):
        raise _NotRaised("the scores' product computes more than a product")
    extents = p.loop.parallel_extents
    tq, tk = extents[-2], extents[-1]
    bh = 1
    for n in extents[:-2]:
        bh *= n
    pc = _coords(p, p_store[0], tq, tk, bh)
    cc = _coords(c, s_load, tq, tk, bh)
    # The statistics: M = max_j F, L = sum_j exp(F - max_j F).
    m_host, l_host = c.host(mload.buffer), c.host(lload.buffer)
    stats: dict[str, _Kernel] = {}
    for what, host in (("max", m_host), ("sum", l_host)):
        w = m.the_writer(host, f"the softmax's row {what}")
        st = _stored(w, host)
        r = _owner(st.value, ta.ReduceOp)
        if r is None or len(w.loop.reduce_extents) != 1:
            raise _NotRaised(f"the softmax's row {what} is not a reduction")
        f = r.value
        if what == "sum":
            exp = _owner(r.value, math.ExpOp)
            sub = _owner(exp.operand, arith.SubfOp) if exp else None
            rmax = _owner(sub.rhs, ta.ReduceOp) if sub else None
            if rmax is None or ReductionKind(rmax.kind.data) != ReductionKind.MAX:
                raise _NotRaised("the softmax's row sum is not of exp(x - max x)")
            f = sub.lhs
            wl = [
                x
                for x in _loads_in(rmax.value)
                if w.host(x.buffer) is c.host(s_load.buffer)
            ]
            f_loads = [
                x for x in _loads_in(f) if w.host(x.buffer) is c.host(s_load.buffer)
            ]
            # the max must read S at the element F reads it: one load op for both
            if (
                len(wl) != 1
                or f_loads != wl
                or not _same(rmax.value, score, w, c, _coords(w, wl[0], tq, tk, bh), cc)
            ):
                raise _NotRaised("the softmax's row sum subtracts another max")
        if ReductionKind(r.kind.data) != (
            ReductionKind.MAX if what == "max" else ReductionKind.SUM
        ):
            raise _NotRaised(f"the softmax's row {what} is another reduction")
        s_in_w = [x for x in _loads_in(f) if w.host(x.buffer) is c.host(s_load.buffer)]
        if len(s_in_w) != 1:
            raise _NotRaised(f"the softmax's row {what} reads the scores twice")
        wc = _coords(w, s_in_w[0], tq, tk, bh)
        if not _same(f, score, w, c, wc, cc):
            raise _NotRaised(f"the softmax's row {what} is of other scores")
        load = mload if what == "max" else lload
        if wc.atoms(_flat(st)) != cc.atoms(_flat(load)):
            raise _NotRaised(f"the softmax's row {what} is read at another row")
        stats[what] = w
    temporaries = [c.host(s_load.buffer), m_host, l_host]
    if guard is not None:
        flag = _all_masked_flag(guard)
        if flag is None:
            raise _NotRaised("the softmax's weights are zeroed by another test")
        t_host = c.host(flag.buffer)
        w = m.the_writer(t_host, "the rows' all-masked test")
        st = _stored(w, t_host)
        f = _unmasked_row_max(st.value)
        s_in_w = (
            []
            if f is None
            else [x for x in _loads_in(f) if w.host(x.buffer) is c.host(s_load.buffer)]
        )
        if f is None or len(s_in_w) != 1 or len(w.loop.reduce_extents) != 1:
            raise _NotRaised("the rows' all-masked test is not of the scores")
        wc = _coords(w, s_in_w[0], tq, tk, bh)
        if not _same(f, score, w, c, wc, cc) or wc.atoms(_flat(st)) != cc.atoms(
            _flat(flag)
        ):
            raise _NotRaised("the rows' all-masked test is of other scores")
        stats["flag"] = w
        temporaries.append(t_host)
    for w in [p, *stats.values()]:
        _stores_only(w, temporaries)
    order = m.launches.index
    if (
        not order(p.launch)
        < min(order(w.launch) for w in stats.values())
        <= max(order(w.launch) for w in stats.values())
        < order(c.launch)
    ):
        raise _NotRaised("the kernels are not launched product, statistics, consumer")
    readers = {p.launch, c.launch, *(w.launch for w in stats.values())}
    for t in temporaries:
        if not isinstance(t.owner, ta.AllocOp):
            raise _NotRaised("the scores or statistics are not intermediates")
        for view in host_views(t):
            for use in view.uses:
                if not isinstance(use.operation, ta.ReshapeOp) and (
                    use.operation not in readers
                ):
                    raise _NotRaised("the scores or statistics are read elsewhere")
    between = m.launches[order(p.launch) + 1 : order(c.launch)]
    inputs = q.hosts() | k.hosts() | v.hosts()
    inputs |= {c.host(x.buffer) for x in loads if x is not s_load}
    for launch in between:
        if launch in readers:
            continue
        kernel = m.kernels.get(launch.callee.string_value())
        for n, a in enumerate(launch.args):
            if host_root(a) in inputs and (
                kernel is None or kernel.role_of(kernel.body.block.args[n]) != ArgRole.IN
            ):
                raise _NotRaised(
                    "a kernel between the product and the consumer writes an input"
                )
    return _Chain(
        p,
        list({w.kernel: w for w in stats.values()}.values()),
        c,
        score,
        s_load,
        q,
        k,
        v,
        store,
        [x.scale for x in (q, k) if x.scale is not None],
        guard is not None,
        pc,
        cc,
        (tq, tk, prod(p.loop.reduce_extents)),
        temporaries,
    )


def _domain_of(
    chain: _Chain,
) -> tuple[list[int], dict[int, int], dict[int, int], dict[int, list[int]], int]:
    """The attention domain's batch extents (C's batch vars), where each of C's and
    P's loop vars goes in it, the domain batch dims each P batch var spans (P may
    flatten batch dims C keeps apart: a padding mask's (B, H) split), and the value
    dim's extent."""
    c, p = chain.c, chain.p
    cc, pc = chain.c_coords, chain.p_coords
    nb = len(cc.batch)
    c_batch = sorted(cc.batch, key=lambda q: -cc.batch[q])
    c_ext, p_ext = c.loop.extents, p.loop.extents
    groups: dict[int, list[int]] = {}
    for q, w in pc.batch.items():
        span = [k for k, x in enumerate(c_batch) if w <= cc.batch[x] < w * p_ext[q]]
        extent = 1
        for k in span:
            extent *= c_ext[c_batch[k]]
        if (
            not span
            or span != list(range(span[0], span[-1] + 1))
            or extent != p_ext[q]
            or cc.batch[c_batch[span[-1]]] != w
        ):
            raise _NotRaised("the product and the consumer split the batch differently")
        groups[q] = span
    if sorted(k for span in groups.values() for k in span) != list(range(nb)):
        raise _NotRaised("the product and the consumer split the batch differently")
    n_par = len(c.loop.parallel_extents)
    rest = [q for q in range(n_par) if q not in cc.batch and q != cc.i]
    if len(rest) != 1:
        raise _NotRaised("the consumer's loop is not (batch, i, e)")
    c_at = {q: k for k, q in enumerate(c_batch)} | {
        cc.i: nb,
        cc.j: nb + 1,
        rest[0]: nb + 3,
    }
    p_at = {q: span[0] for q, span in groups.items()} | {
        pc.i: nb,
        pc.j: nb + 1,
        len(p.loop.parallel_extents): nb + 2,
    }
    return [c_ext[q] for q in c_batch], c_at, p_at, groups, c_ext[rest[0]]


def _expanded(
    t: MemRefType,
    dim_vars: Sequence[int | None],
    groups: dict[int, list[int]],
    at: dict[int, int],
    batch: Sequence[int],
    n_dims: int,
) -> tuple[MemRefType, AffineMapAttr]:
    """A view of P's (the loop var each dim of `t` is indexed by, None for another
    index) over the domain: a dim whose P batch var spans several domain batch dims is
    split into theirs (a reshape of leading dims, free)."""
    shape: list[int] = []
    results: list[AffineExpr] = []
    rank = len(t.get_shape())
    for k, (n, var) in enumerate(zip(t.get_shape(), dim_vars, strict=True)):
        if var is None:
            raise _NotRaised("an operand of the scores' product is not a view")
        span = groups.get(var)
        if span is not None and len(span) > 1:
            if k >= rank - 2:
                raise _NotRaised("splitting the batch would relayout a factor")
            shape += [batch[x] for x in span]
            results += [AffineDimExpr(x) for x in span]
        else:
            shape.append(n)
            results.append(AffineDimExpr(at[var]))
    m = AffineMap(n_dims, 0, tuple(results))
    return MemRefType(t.element_type, shape), AffineMapAttr(m)


def _with_unit_row(
    t: MemRefType, m: AffineMapAttr, row: int, extent: int
) -> tuple[MemRefType, AffineMapAttr]:
    """A view over the domain that leaves out the row dim `row` of extent 1 (a decode
    step's one query), with it put back as a unit dim before the minor one."""
    results = m.data.results
    if extent != 1 or any(row in ta.dims_of(r) for r in results) or not results:
        return t, m
    shape = list(t.get_shape())
    shape.insert(len(shape) - 1, 1)
    with_row = (*results[:-1], AffineDimExpr(row), results[-1])
    return MemRefType(t.element_type, shape), AffineMapAttr(
        AffineMap(m.data.num_dims, 0, with_row)
    )


def _load_vars(load: ta.LoadOp) -> list[int | None]:
    """The loop var each dim of the load's view is indexed by (None: another index)."""
    found: list[int | None] = []
    for expr in load.map.data.results:
        var = load.dims[expr.position] if isinstance(expr, AffineDimExpr) else None
        found.append(var.index if isinstance(var, BlockArgument) else None)
    return found


def _map_over(
    op: ta.LoadOp | ta.StoreOp, at: dict[int, int], n_dims: int
) -> AffineMapAttr:
    """The access's map over the attention domain (its loop vars moved by `at`)."""
    used = {q for r in op.map.data.results for q in ta.dims_of(r)}
    dims: list[AffineExpr] = []
    for q, d in enumerate(op.dims):
        assert isinstance(d, BlockArgument)
        if q in used and d.index not in at:
            raise _NotRaised("an access reads along a dim outside the attention")
        dims.append(AffineDimExpr(at.get(d.index, 0)))
    m = op.map.data.replace_dims_and_symbols(dims, [], n_dims, 0)
    return AffineMapAttr(m)


def _view_chain(buffer: SSAValue) -> tuple[BlockArgument, list[MemRefType]]:
    chain: list[MemRefType] = []
    while isinstance(buffer.owner, ta.ReshapeOp):
        chain.append(buffer.type)  # type: ignore[arg-type]
        buffer = buffer.owner.source
    assert isinstance(buffer, BlockArgument)
    return buffer, chain[::-1]


class _Builder:
    """A new kernel's block: an argument per host buffer its accesses read or write (in
    the order they are first asked for), and each view of one, made once."""

    def __init__(self) -> None:
        self.block = Block()
        self.hosts: list[SSAValue] = []
        self.roles: list[ArgRole] = []
        self._views: dict[tuple[SSAValue, MemRefType], SSAValue] = {}

    def arg(self, host: SSAValue, role: ArgRole = ArgRole.IN) -> BlockArgument:
        if host in self.hosts:
            n = self.hosts.index(host)
            if self.roles[n] != role:
                self.roles[n] = ArgRole.INOUT
            return self.block.args[n]
        self.hosts.append(host)
        self.roles.append(role)
        arg = self.block.insert_arg(host.type, len(self.block.args))
        arg.name_hint = host.name_hint
        return arg

    def view(self, k: _Kernel, buffer: SSAValue, role: ArgRole = ArgRole.IN) -> SSAValue:
        """`buffer` (a view in k) in the new kernel."""
        arg, types = _view_chain(buffer)
        new: SSAValue = self.arg(k.launch.args[arg.index], role)
        for t in types:
            new = self.reshaped(new, t, buffer.name_hint)
        return new

    def reshaped(self, value: SSAValue, t: MemRefType, name: str | None) -> SSAValue:
        """`value` viewed as `t`."""
        if value.type == t:
            return value
        if (value, t) not in self._views:
            reshape = ta.ReshapeOp(value, t)
            reshape.result.name_hint = name
            self.block.add_op(reshape)
            self._views[(value, t)] = reshape.result
        return self._views[(value, t)]

    def kernel(self, module: ModuleOp, name: str, location: Attribute) -> ta.KernelOp:
        taken = {k.sym_name.data for k in module.ops if isinstance(k, ta.KernelOp)}
        while name in taken:
            name += "_"
        kernel = ta.KernelOp(name, self.block.arg_types, self.roles, Region(self.block))
        kernel.location = location
        return kernel


@dataclass(eq=False)
class _Computed:
    """A factor computed ahead of the attention into a buffer of its own, whose dims are
    the factor's batch vars, its row var and its head dim (the product's reduce vars
    flattened): the view the flash-attention tiler takes, whatever the layout and the
    arithmetic (a bias added, a rotary embedding, a (B, T, H, D) relayout) it is
    computed from."""

    what: str
    factor: _Factor
    vars: list[int]
    """Of the factor's loop: its batch vars, its row var, then its head-dim vars."""
    heads: int
    """How many of `vars` are head-dim vars."""
    alloc: ta.AllocOp

    @property
    def extents(self) -> tuple[int, ...]:
        return tuple(self.factor.kernel.loop.extents[v] for v in self.vars)


def _nbytes(t: MemRefType) -> int:
    return prod(t.get_shape()) * numpy_dtype(t.element_type).itemsize


def _factor_ops(value: SSAValue, loop: ta.LoopOp, what: str) -> list[Operation]:
    """The ops of `loop`'s body that compute `value`, in body order (a load ends a
    path: its buffer is a view of the kernel's)."""
    found: set[Operation] = set()
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner not in found:
            if isinstance(owner, ta.ReduceOp | ta.StoreOp) or owner.regions:
                raise _NotRaised(f"{what} reduces, or stores")
            found.add(owner)
            if isinstance(owner, ta.LoadOp):
                if owner.symbols:
                    raise _NotRaised(f"{what} has a data-dependent index")
            else:
                stack.extend(owner.operands)
    return [o for o in loop.body.block.ops if o in found]


def _computed(
    what: str, factor: _Factor, batch: Sequence[int], row: int, heads: Sequence[int]
) -> _Computed:
    """`factor` as a buffer of its own: over the batch vars (of `batch`, in domain
    order) it varies along, the row var and the head-dim vars."""
    loop = factor.kernel.loop
    used: set[int] = set()
    for o in _factor_ops(factor.value, loop, what):
        if isinstance(o, ta.LoadOp):
            dims = o.map.data.used_dims()
            used |= {d.index for k, d in enumerate(o.dims) if k in dims}  # type: ignore[attr-defined]
        else:
            used |= {
                x.index
                for x in o.operands
                if isinstance(x, BlockArgument) and x.owner is loop.body.block
            }
    if not used <= {*batch, row, *heads}:
        raise _NotRaised(f"{what} varies along a dim outside the attention")
    found = [b for b in batch if b in used] + [row, *heads]
    shape = [loop.extents[v] for v in found[: -len(heads)]]
    shape.append(prod(loop.extents[v] for v in heads))
    alloc = ta.AllocOp(MemRefType(factor.value.type, shape))
    alloc.result.name_hint = what
    return _Computed(what, factor, found, len(heads), alloc)


def _factor_kernels(
    module: ModuleOp, computed: list[_Computed], name: str
) -> list[tuple[ta.KernelOp, list[SSAValue], list[_Computed]]]:
    """One kernel per loop shape, computing each factor of that shape into its buffer
    (a bias-added q, k and v share one)."""
    shapes: dict[tuple[int, ...], list[_Computed]] = {}
    for x in computed:
        shapes.setdefault(x.extents, []).append(x)
    built: list[tuple[ta.KernelOp, list[SSAValue], list[_Computed]]] = []
    for extents, group in shapes.items():
        b = _Builder()
        loop = ta.LoopOp(extents)
        args = loop.body.block.args
        for x in group:
            at = {v: n for n, v in enumerate(x.vars)}
            source = x.factor.kernel
            values: dict[SSAValue, SSAValue] = {
                a: args[at[a.index]] for a in source.loop.body.block.args if a.index in at
            }
            for o in _factor_ops(x.factor.value, source.loop, x.what):
                if isinstance(o, ta.LoadOp):
                    new = ta.LoadOp(
                        b.view(source, o.buffer), _map_over(o, at, len(at)), list(args)
                    )
                else:
                    new = o.clone(value_mapper=values)
                new.location = o.location
                loop.body.block.add_op(new)
                for old_r, new_r in zip(o.results, new.results):
                    values[old_r] = new_r
                    new_r.name_hint = old_r.name_hint
            out: SSAValue = b.arg(x.alloc.result, ArgRole.OUT)
            out = b.reshaped(
                out, MemRefType(x.factor.value.type, extents), x.alloc.result.name_hint
            )
            identity = AffineMapAttr(AffineMap.identity(len(extents)))
            store = ta.StoreOp(values[x.factor.value], out, identity, list(args))
            store.location = x.factor.value.owner.location  # type: ignore[union-attr]
            loop.body.block.add_op(store)
        b.block.add_op(loop)
        kernel = b.kernel(
            module,
            f"{name}_{'_'.join(x.what for x in group)}",
            group[0].factor.kernel.kernel.location,
        )
        built.append((kernel, b.hosts, group))
    return built


def _rewrite(module: ModuleOp, m: _Matcher, chain: _Chain) -> None:
    """Put one kernel with the chain's `ta.attention` where the consumer was, launched
    where it was launched, kernels computing the factors it does not read as they are
    (`_Computed`) where the product was launched, and erase the product, the
    statistics and their buffers."""
    c, p = chain.c, chain.p
    cc, pc = chain.c_coords, chain.p_coords
    batch, c_at, p_at, groups, e = _domain_of(chain)
    nb = len(batch)
    tq, tk, d = chain.sizes
    n_dims = nb + 4
    score_ops = [
        o
        for o in c.loop.body.block.ops
        if o is not chain.s_load and _in_dag(o, chain.score)
    ]
    for o in score_ops:
        if isinstance(o, ta.LoadOp):
            # the tiler reads a score block as (rows, cols) in (batch, i, j) order
            used = [
                o.dims[e.position].index  # type: ignore[attr-defined]
                for e in o.map.data.results
                if isinstance(e, AffineDimExpr)
            ]
            order_in = [c_at.get(q, -1) for q in used]
            if order_in != sorted(order_in) or len(set(order_in)) != len(order_in):
                raise _NotRaised(
                    "the score reads a buffer other than in (batch, i, j) order"
                )
        elif isinstance(o, ta.ReduceOp | ta.StoreOp) or o.regions:
            raise _NotRaised("the score reduces or stores")
        elif any(isinstance(x, BlockArgument) for x in o.operands):
            raise _NotRaised("the score computes with a loop index")
    # Each factor as it is read (a view in the tiler's form), or computed ahead.
    p_heads = list(range(len(p.loop.parallel_extents), len(p.loop.extents)))
    c_value = next(q for q, at in c_at.items() if at == nb + 3)
    forms = {
        "q": (chain.q, sorted(pc.batch, key=p_at.get), pc.i, p_heads, p_at, groups),
        "k": (chain.k, sorted(pc.batch, key=p_at.get), pc.j, p_heads, p_at, groups),
        "v": (chain.v, sorted(cc.batch, key=c_at.get), cc.j, [c_value], c_at, {}),
    }
    computed: dict[str, _Computed] = {}
    extent_of = {"q": (nb, tq), "k": (nb + 1, tk), "v": (nb + 1, tk), "out": (nb, tq)}

    def as_read(what: str) -> tuple[MemRefType, AffineMapAttr]:
        """The view of a factor's load over the domain."""
        f, _, _, _, at, grp = forms[what]
        assert f.load is not None
        t = f.load.buffer.type
        t, mp = _expanded(t, _load_vars(f.load), grp, at, batch, n_dims)  # type: ignore[arg-type]
        return _with_unit_row(t, mp, *extent_of[what])

    for what, (f, f_batch, row, heads, _, _) in forms.items():
        if f.load is not None and len(heads) == 1:
            try:
                _, mp = as_read(what)
                if ta.attention_view_form_error(nb, {what: mp.data}) is None:
                    continue
            except _NotRaised:
                pass
        computed[what] = _computed(what, f, f_batch, row, heads)
    # A factor computed ahead is written and read back once; the chain's scores are
    # written and read twice (by the statistics and the consumer).
    ahead = sum(_nbytes(x.alloc.result.type) for x in computed.values())
    spared = 3 * 4 * prod(batch) * tq * tk
    if 2 * ahead > spared:
        raise _NotRaised(
            f"computing {', '.join(computed)} ahead would move {2 * ahead} bytes, more "
            f"than the {spared} of the scores it spares"
        )
    # The new kernel's arguments: each host buffer an access reads or writes.
    b = _Builder()
    out_role = c.kernel.role_of(_view_chain(chain.out.buffer)[0])
    for what, (f, *_) in forms.items():
        if what in computed:
            b.arg(computed[what].alloc.result)
        else:
            b.arg(f.kernel.launch.args[_view_chain(f.load.buffer)[0].index])  # type: ignore[union-attr]
    b.arg(c.launch.args[_view_chain(chain.out.buffer)[0].index], out_role)
    for o in score_ops:
        if isinstance(o, ta.LoadOp):
            b.arg(c.launch.args[_view_chain(o.buffer)[0].index])

    def operand(what: str) -> tuple[SSAValue, AffineMapAttr]:
        f, _, _, _, at, grp = forms[what]
        x = computed.get(what)
        if x is not None:
            dim_vars = [*x.vars[: -x.heads], x.vars[-x.heads]]
            t, mp = _expanded(x.alloc.result.type, dim_vars, grp, at, batch, n_dims)
            return b.reshaped(b.arg(x.alloc.result), t, what), mp
        assert f.load is not None
        t, mp = as_read(what)
        return b.reshaped(b.view(f.kernel, f.load.buffer), t, f.load.buffer.name_hint), mp

    out = b.view(c, chain.out.buffer, out_role)
    t, mp = _with_unit_row(
        out.type,  # type: ignore[arg-type]
        _map_over(chain.out, c_at, n_dims),
        *extent_of["out"],
    )
    operands = {what: operand(what) for what in forms} | {
        "out": (b.reshaped(out, t, out.name_hint), mp)
    }
    error = ta.attention_view_form_error(
        nb, {w: m.data for w, (_, m) in operands.items()}
    )
    if error is not None:
        raise _NotRaised(error)
    region = Block(arg_types=[*([IndexType()] * (nb + 2)), Float32Type()])
    names = ["b"] * nb + ["i", "j"]
    for a, name in zip(region.args, names):
        a.name_hint = name
    region.args[-1].name_hint = "s"
    scores: SSAValue = region.args[-1]
    for const in chain.scales:
        # (q * c) . (k * c') as (q . k) * c * c': equal up to rounding
        c_new = const.clone()
        region.add_op(c_new)
        scaled = arith.MulfOp(scores, c_new.result)
        region.add_op(scaled)
        scores = scaled.result
    values: dict[SSAValue, SSAValue] = {chain.s_load.result: scores}
    score_at = {q: k for q, k in c_at.items() if k < nb + 2}
    for o in score_ops:
        if isinstance(o, ta.LoadOp):
            new = ta.LoadOp(
                b.view(c, o.buffer),
                _map_over(o, score_at, nb + 2),
                list(region.args[: nb + 2]),
            )
        else:
            new = o.clone(value_mapper=dict(values))
        new.location = o.location
        region.add_op(new)
        for old_r, new_r in zip(o.results, new.results):
            values[old_r] = new_r
            new_r.name_hint = old_r.name_hint
    region.add_op(ta.YieldOp(values[chain.score]))
    attention = ta.AttentionOp(
        batch, [tq, tk, d, e], operands, Region(region), chain.zero_masked_rows
    )
    attention.location = chain.out.location
    if error := attention.view_form_error() or attention_blocks_error(attention):
        raise _NotRaised(error)

    def reads_iota(load: ta.LoadOp) -> bool:
        host = host_root(b.hosts[ta.root_buffer(load.buffer).index])  # type: ignore[attr-defined]
        return ta.is_iota_argument(host) and load.buffer.type == host.type

    if (offset := causal_bound(attention, reads_iota)) is not None:
        attention.properties["causal"] = IntegerAttr(offset, i64)
        if (unmasked := without_causal_mask(attention, reads_iota)) is not None:
            _yield_without_mask(attention, unmasked)  # `causal` says it
    b.block.add_op(attention)
    kernel = b.kernel(module, f"{c.kernel.sym_name.data}_attention", c.kernel.location)
    attention.verify()
    ahead = _factor_kernels(module, list(computed.values()), p.kernel.sym_name.data)
    emit_remark(
        attention,
        f"raise-attention: @{p.kernel.sym_name.data}, "
        + ", ".join(f"@{w.kernel.sym_name.data}" for w in chain.stats)
        + f" and @{c.kernel.sym_name.data} are one softmax attention, "
        f"@{kernel.sym_name.data}"
        + "".join(
            f"; {', '.join(x.what for x in group)} computed ahead by @{k.sym_name.data}"
            for k, _, group in ahead
        ),
    )
    for x in computed.values():
        Rewriter.insert_op(x.alloc, InsertPoint.before(p.launch))
    for k, hosts, _ in ahead:
        Rewriter.insert_op(k, InsertPoint.before(p.kernel))
        launch = ta.LaunchOp(k.sym_name.data, hosts)
        launch.location = p.launch.location
        Rewriter.insert_op(launch, InsertPoint.before(p.launch))
    Rewriter.insert_op(kernel, InsertPoint.before(c.kernel))
    launch = ta.LaunchOp(kernel.sym_name.data, b.hosts)
    launch.location = c.launch.location
    Rewriter.insert_op(launch, InsertPoint.before(c.launch))
    for k in [c, *chain.stats, p]:
        Rewriter.erase_op(k.launch)
        Rewriter.erase_op(k.kernel)
    for t in chain.temporaries:
        _erase_unused(t)


def _yield_without_mask(attention: ta.AttentionOp, unmasked: SSAValue) -> None:
    """Yield `unmasked` from the score region, and drop the ops left unused."""
    region = attention.score.block
    yielded = region.last_op
    assert isinstance(yielded, ta.YieldOp)
    yielded.operands[0] = unmasked
    for dead in reversed(list(region.ops)):
        if dead is not yielded and not any(r.uses for r in dead.results):
            region.erase_op(dead)


def _in_dag(op: Operation, root: SSAValue) -> bool:
    """Whether `op` computes part of `root` (within one block)."""
    stack = [root]
    seen: set[SSAValue] = set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is op:
            return True
        if isinstance(v.owner, Operation):
            stack.extend(v.owner.operands)
    return False


def _erase_unused(value: SSAValue) -> None:
    """A host buffer and its views, once nothing uses them."""
    for use in list(value.uses):
        if isinstance(use.operation, ta.ReshapeOp):
            _erase_unused(use.operation.result)
    if not value.uses and isinstance(value.owner, Operation):
        Rewriter.erase_op(value.owner)


@dataclass(frozen=True)
class RaiseAttentionPass(CheckedOptionsPass):
    """Rewrite each matmul-softmax-matmul chain of kernels into one kernel holding a
    `ta.attention` (see the module docstring for when it applies; a remark at the
    consumer's loop says why a chain of that form was left as it was)."""

    name = "raise-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if find_forward(op) is None:
            return
        reported: set[str] = set()
        # Kernels that ended no chain: a rewrite replaces only its own chain's
        # kernels, so they are not matched again after it (a model of L layers
        # would otherwise be matched L times over).
        tried: set[str] = set()
        while True:
            m = _Matcher(op)
            for launch in reversed(m.launches):
                c = m.launched(launch)
                if c is None or c.kernel.sym_name.data in tried:
                    continue
                try:
                    chain = match(m, c)
                    if chain is None:
                        tried.add(c.kernel.sym_name.data)
                        continue
                    _rewrite(op, m, chain)
                except _NotRaised as e:
                    name = c.kernel.sym_name.data
                    tried.add(name)
                    if name not in reported:
                        reported.add(name)
                        emit_remark(c.loop, f"{self.name}: not raised: {e}")
                    continue

                count(self.name, "attentions raised")
                break
            else:
                return
