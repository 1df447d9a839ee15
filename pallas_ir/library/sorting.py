"""Sorting and selection, as torch computes them: values with their int indices."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def sort_keys(x, descending):
    """Keys that `lax.sort` orders as torch orders `x` (ascending, stable): NaN is
    larger than every number, -0.0 equals 0.0; descending reverses that order exactly
    (`~` for ints, which has no overflow at the most negative value)."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        nan = jnp.isnan(x)
        value = jnp.where(nan | (x == 0), 0, x)
        group = nan.astype(jnp.int32)
        return (-group, -value) if descending else (group, value)
    value = x.astype(jnp.int32)
    return (~value,) if descending else (value,)


def lib_sort(x, *, dim, descending, stable):
    """`torch.sort`: the values along `dim` in order and where each came from. Ties
    keep their order: eager's for `stable=True`; the default sort leaves it open (and
    eager's CPU order of ties is not stable on large inputs)."""
    del stable  # lax.sort is stable
    x = jnp.moveaxis(x, dim, -1)
    axis = x.ndim - 1
    keys = sort_keys(x, descending)
    index = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    index = lax.sort((*keys, index), dimension=axis, num_keys=len(keys))[-1]
    values = jnp.take_along_axis(x, index, axis=axis)
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(index, -1, dim)


def top_k_keys(x, largest):
    """int32 keys whose descending order is torch's topk order of `x`: NaN above every
    number, -0.0 equal to 0.0; for the smallest, the exact reverse (`~`). A float's
    bits, with its magnitude bits flipped when negative, order as the float does."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        wide = x.astype(jnp.float32)  # bf16 and f16 widen exactly
        bits = lax.bitcast_convert_type(jnp.where(wide == 0, 0.0, wide), jnp.int32)
        key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
        key = jnp.where(jnp.isnan(wide), jnp.int32(0x7FFFFFFF), key)
    else:
        key = x.astype(jnp.int32)
    return key if largest else ~key


def lib_topk(x, *, k, dim, largest, sorted):
    """`torch.topk`: the `k` largest (or smallest) along `dim`, in order, with their
    indices (NaN counts as the largest, as in eager). `lax.top_k` on `top_k_keys`: it
    puts the lower index first among equal keys, as eager's stable order does, and on a
    TPU it is 57x faster than sorting the rows (4096 rows of 64: 37 us against 2.1 ms,
    device time on a v5e)."""
    del sorted  # always sorted, as eager's CPU result is
    rows = jnp.moveaxis(x, dim, -1)
    if k == 0 or rows.shape[-1] == 0:
        empty = rows[..., :0]
        index = empty.astype(jnp.int32)
        return jnp.moveaxis(empty, -1, dim), jnp.moveaxis(index, -1, dim)
    _, index = lax.top_k(top_k_keys(rows, largest), k)
    values = jnp.take_along_axis(rows, index, axis=-1)
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(index, -1, dim)


def as_rows(x, dim):
    """`x` with `dim` last and the other dims flattened: (rows, n)."""
    x = jnp.moveaxis(x, dim, -1)
    return x.reshape(-1, x.shape[-1])


def from_rows(r, shape, dim):
    """A (rows,) result of `as_rows(x, dim)` in `x`'s `shape`, `dim` kept (size 1)."""
    kept = [n for d, n in enumerate(shape) if d != dim]
    return jnp.expand_dims(r.reshape(kept), dim)


def with_writes(values, index, writes):
    """`values` and `index` with `writes` done: (position, value, index) each, all
    read before any is written, at distinct positions (one past the end: none)."""
    positions, new_values, new_index = (jnp.stack(w) for w in zip(*writes))
    return (
        values.at[positions].set(new_values, mode="drop"),
        index.at[positions].set(new_index, mode="drop"),
    )


def greater_or_nan(a, b):
    """Eager's order for selection: NaN above every number."""
    return (jnp.isnan(a) & ~jnp.isnan(b)) | (a > b)


def pair_where(cond, a, b):
    """The pair (value, index) `a` where `cond`, else `b`."""
    return tuple(jnp.where(cond, p, q) for p, q in zip(a, b))


def pair_exchange(cond, a, b):
    """The pairs (value, index) `a` and `b`, exchanged where `cond`."""
    return pair_where(cond, b, a), pair_where(cond, a, b)


def quickselect(rows, k):
    """The element that eager's CPU `kthvalue` selects as the `k`-th smallest (from
    0) of each of `rows`, and its index: its quickselect (`quick_select_template`: a
    median of three pivot, Hoare partitions) replayed step by step, so that among
    equal values the index is eager's. Each step is one phase of that algorithm: 0
    orders [low, high] if it has two elements, or moves a median of three to low
    (the pivot); 1 and 2 move the scan pointers i up and j down; 3 swaps them, or
    puts the pivot at j and narrows [low, high] to the side with `k`; 4 is the end.
    The scans stop at the row's ends, where eager relies on sentinels (there for an
    order, as this one is)."""
    n = rows.shape[1]

    def step(state):
        values, index, low, high, i, j, phase = state

        def at(p):
            return values[p], index[p]

        pivot = values[low]
        partition = high > low + 1
        middle = low + (high - low) // 2
        crossed = j < i
        # phase 0: the middle element to low + 1, then low + 1, low and high ordered
        # so that low holds the median (eager's three compare-and-swaps)
        a, b, c = at(low), at(middle), at(high)
        b, c = pair_exchange(greater_or_nan(b[0], c[0]), b, c)
        a, c = pair_exchange(greater_or_nan(a[0], c[0]), a, c)
        b, a = pair_exchange(greater_or_nan(b[0], a[0]), b, a)
        # or, with two elements, those two in order
        low2, high2 = pair_exchange(
            greater_or_nan(values[low], values[high]), at(low), at(high)
        )
        # phase 3: swap i and j, or the pivot (at low) and j
        left = jnp.where(crossed, low, i)
        pick, settle = phase == 0, phase == 3
        some = pick & (high > low)
        up = jnp.minimum(i + 1, n - 1)
        down = jnp.maximum(j - 1, 0)
        more_up = greater_or_nan(pivot, values[up]) & (up < n - 1)
        more_down = greater_or_nan(values[down], pivot) & (down > 0)
        # No write (a position past the end) depends on every read that decides the
        # next phase: all reads then come before the writes, which XLA does in
        # place, not on a copy of the row.
        none = n + (more_up | more_down).astype(jnp.int32)
        slots = [
            (
                jnp.where(pick & partition & (middle > low + 1), middle, none),
                *at(low + 1),
            ),
            (
                jnp.where(some, low, jnp.where(settle, left, none)),
                *pair_where(pick, pair_where(partition, a, low2), at(j)),
            ),
            (
                jnp.where(pick & partition, low + 1, jnp.where(settle, j, none)),
                *pair_where(pick, b, at(left)),
            ),
            (jnp.where(some, high, none), *pair_where(partition, c, high2)),
        ]
        values, index = with_writes(values, index, slots)
        phases = [pick, phase == 1, phase == 2, settle]
        low = jnp.where(settle & crossed & (j <= k), i, low)
        high = jnp.where(settle & crossed & (j >= k), j - 1, high)
        i = jnp.select(phases, [low + 1, up, i, i], i)
        j = jnp.select(phases, [high, j, down, j], j)
        phase = jnp.select(
            phases,
            [
                jnp.where(partition, 1, 4),
                jnp.where(more_up, 1, 2),
                jnp.where(more_down, 2, 3),
                jnp.where(crossed, 0, 1),
            ],
            phase,
        )
        return values, index, low, high, i, j, phase

    count = rows.shape[0]
    zero = jnp.zeros((count,), jnp.int32)
    index = lax.broadcasted_iota(jnp.int32, rows.shape, 1)
    state = (rows, index, zero, zero + n - 1, zero, zero, zero)
    if n > 1:
        # One loop for all rows (a step of a finished row changes nothing): a loop
        # per row under vmap would select every row's whole state at every step.
        state = lax.while_loop(lambda s: jnp.any(s[6] != 4), jax.vmap(step), state)
    return state[0][:, k], state[1][:, k]


def lib_kthvalue(x, *, k, dim):
    """`torch.kthvalue`: the `k`-th smallest along `dim` (from 1) and its index, with
    `dim` kept (size 1), as eager's CPU kernel selects it."""
    r = as_rows(x, dim)
    values, index = quickselect(r, k - 1)
    return from_rows(values, x.shape, dim), from_rows(index, x.shape, dim)


def introsort(rows):
    """Each of `rows` and its indices in the order libstdc++'s `std::sort` leaves
    them with a comparator of values only (`a < b`), which eager's CPU `mode` sorts
    with, so that equal values keep the order eager gives them: its introsort (median of
    three pivots, unguarded Hoare partitions down to ranges of 16, heapsort past a
    depth of 2 log2 n) replayed step by step, then its final insertion sort, which
    is a stable sort of what the partitions left. The ranges still to partition are
    on a stack (they are disjoint: their order does not matter). Phases: 0 takes a
    range from the stack, 1 and 2 move a partition's pointers lo up and hi down, 3
    is the end; a range past the depth limit is heapsorted by 4 (the next parent of
    make_heap), 5 (the next pop of sort_heap), 6 (a hole sifted down to a leaf) and
    7 (the held value sifted up from it), as libstdc++'s __adjust_heap does."""
    n = rows.shape[1]
    limit = 2 * (n.bit_length() - 1)

    def step(state):
        v, x, stack, sp = state["values"], state["index"], state["stack"], state["sp"]
        first, last, depth = state["first"], state["last"], state["depth"]
        lo, hi = state["lo"], state["hi"]
        hole, top, child = state["hole"], state["top"], state["child"]
        held, held_x = state["held"], state["held_index"]
        counter, heap_end, sorting = state["parent"], state["heap_end"], state["sorting"]
        phase = state["phase"]

        def at(p):
            return v[p], x[p]

        is_ = [phase == p for p in range(8)]
        # phase 0: the next range from the stack
        empty = sp == 0
        next_first, next_last, next_depth = (
            stack[jnp.maximum(sp - 1, 0), f] for f in range(3)
        )
        next_size = next_last - next_first
        small = next_size <= 16
        start = is_[0] & ~empty & ~small
        to_heap = start & (next_depth == 0)
        # __move_median_to_first(first, first + 1, mid, last - 1)
        a, b, c = next_first + 1, next_first + next_size // 2, next_last - 1
        ab, bc, ac = v[a] < v[b], v[b] < v[c], v[a] < v[c]
        median = jnp.where(
            ab,
            jnp.where(bc, b, jnp.where(ac, c, a)),
            jnp.where(ac, a, jnp.where(bc, c, b)),
        )
        # phases 1 and 2: __unguarded_partition(first + 1, last, pivot = first)
        pivot = v[first]
        more_lo = (v[lo] < pivot) & (lo < n - 1)
        stop_hi = ~((pivot < v[hi]) & (hi > 0))
        crossed = ~(lo < hi)
        split = is_[2] & stop_hi & crossed
        exchange_lo_hi = is_[2] & stop_hi & ~crossed
        # heapsort (positions relative to first): sift a hole down to a leaf (6), then
        # the held value up from it (7), as __adjust_heap and __push_heap do
        length = jnp.where(sorting == 1, heap_end - first, last - first)
        down = child < (length - 1) // 2
        bigger = 2 * (child + 1)
        bigger = jnp.where(v[first + bigger] < v[first + bigger - 1], bigger - 1, bigger)
        only_child = ((length & 1) == 0) & (child == (length - 2) // 2)
        parent = jnp.maximum(hole - 1, 0) // 2
        rises = (hole > top) & (v[first + parent] < held)
        pop = is_[5] & (heap_end - first > 1)
        new_held, new_held_x = pair_where(
            is_[4], at(first + counter), pair_where(pop, at(heap_end - 1), (held, held_x))
        )
        # the writes: a swap (phases 0 and 2), or one element moved (5, 6, 7)
        swap_a = jnp.where(is_[0], next_first, lo)
        swap_b = jnp.where(is_[0], median, hi)
        swaps = (start & ~to_heap) | exchange_lo_hi
        move_to = jnp.select(
            [pop, is_[6] & (down | only_child), is_[7]],
            [heap_end - 1, first + hole, first + hole],
            -1,
        )
        move_from = jnp.select(
            [pop, is_[6] & down],
            [first, first + bigger],
            jnp.where(is_[6], first + 2 * (child + 1) - 1, first + parent),
        )
        moved = pair_where(is_[7] & ~rises, (held, held_x), at(move_from))
        # No write (a position past the end) depends on every read that decides the
        # next state: all reads then come before the writes, which XLA does in
        # place, not on a copy of the row.
        none = n + (more_lo | jnp.isnan(new_held) | (new_held_x < 0)).astype(jnp.int32)
        v, x = with_writes(
            v,
            x,
            [
                (
                    jnp.where(swaps, swap_a, jnp.where(move_to >= 0, move_to, none)),
                    *pair_where(swaps, at(swap_b), moved),
                ),
                (jnp.where(swaps, swap_b, none), *at(swap_a)),
            ],
        )
        held, held_x = new_held, new_held_x
        # the stack: a pop in phase 0, both sides of a split pushed (ranges over 16)
        sp = jnp.where(is_[0] & ~empty, sp - 1, sp)
        for begin, end in [(lo, last), (first, lo)]:
            push = split & (end - begin > 16)
            slot = jnp.where(push, sp, limit + 2)
            stack = stack.at[slot].set(jnp.stack([begin, end, depth]), mode="drop")
            sp = jnp.where(push, sp + 1, sp)
        # the scalars
        first = jnp.where(start, next_first, first)
        last = jnp.where(start, next_last, last)
        depth = jnp.where(start, jnp.maximum(next_depth - 1, 0), depth)
        lo = jnp.select(
            [start, is_[1] & more_lo, exchange_lo_hi],
            [next_first + 1, lo + 1, lo + 1],
            lo,
        )
        hi = jnp.select(
            [start, is_[1] & ~more_lo, is_[2] & ~stop_hi], [next_last, hi - 1, hi - 1], hi
        )
        begin_sift = is_[4] | pop
        sift_from = jnp.where(is_[4], counter, 0)
        hole = jnp.select(
            [begin_sift, is_[6] & down, is_[6] & only_child, is_[7] & rises],
            [sift_from, bigger, 2 * (child + 1) - 1, parent],
            hole,
        )
        top = jnp.where(begin_sift, sift_from, top)
        child = jnp.select(
            [begin_sift, is_[6] & down, is_[6] & only_child],
            [sift_from, bigger, 2 * (child + 1)],
            child,
        )
        sifted = is_[7] & ~rises
        counter = jnp.select(
            [to_heap, sifted & (sorting == 0)],
            [(next_size - 2) // 2, counter - 1],
            counter,
        )
        made = sifted & (sorting == 0) & (counter < 0)
        heap_end = jnp.select(
            [to_heap, made, pop], [next_last, last, heap_end - 1], heap_end
        )
        sorting = jnp.select([to_heap, made], [0, 1], sorting)
        phase = jnp.select(
            is_,
            [
                jnp.where(empty, 3, jnp.where(small, 0, jnp.where(to_heap, 4, 1))),
                jnp.where(more_lo, 1, 2),
                jnp.where(stop_hi, jnp.where(crossed, 0, 1), 2),
                3,
                6,
                jnp.where(pop, 6, 0),
                jnp.where(down, 6, 7),
                jnp.where(rises, 7, jnp.where(sorting == 0, 4, 5)),
            ],
        )
        return {
            "values": v,
            "index": x,
            "stack": stack,
            "sp": sp,
            "first": first,
            "last": last,
            "depth": depth,
            "lo": lo,
            "hi": hi,
            "hole": hole,
            "top": top,
            "child": child,
            "held": held,
            "held_index": held_x,
            "parent": counter,
            "heap_end": heap_end,
            "sorting": sorting,
            "phase": phase,
        }

    count = rows.shape[0]
    zero = jnp.zeros((count,), jnp.int32)
    stack = jnp.zeros((count, limit + 2, 3), jnp.int32)
    stack = stack.at[:, 0].set(jnp.array([0, n, limit], jnp.int32))
    index = lax.broadcasted_iota(jnp.int32, rows.shape, 1)
    state = {
        name: zero
        for name in ["first", "last", "depth", "lo", "hi", "hole", "top", "child"]
        + ["held_index", "parent", "heap_end", "sorting", "phase"]
    }
    state.update(
        values=rows, index=index, stack=stack, sp=zero + (n > 16), held=rows[:, 0]
    )
    if n > 16:  # else only the insertion sort
        # One loop for all rows, as in `quickselect`.
        state = lax.while_loop(lambda s: jnp.any(s["phase"] != 3), jax.vmap(step), state)
    values, index = state["values"], state["index"]
    # the final insertion sort: stable
    return lax.sort((values, index), dimension=1, num_keys=1)


def lib_mode(x, *, dim):
    """`torch.mode`: the most frequent value along `dim` (the smallest of those most
    frequent), with `dim` kept (size 1), and the index eager's CPU kernel gives: of
    the last of its equal values in the order its `std::sort` leaves them
    (`introsort`)."""
    r = as_rows(x, dim)

    def mode(values, index):
        n = values.shape[0]
        position = jnp.arange(n)
        differs = values[1:] != values[:-1]
        starts = jnp.concatenate([jnp.array([True]), differs])
        ends = jnp.concatenate([differs, jnp.array([True])])
        start = lax.cummax(jnp.where(starts, position, 0))
        count = jnp.where(ends, position - start + 1, 0)
        best = jnp.argmax(count)
        return values[best], index[best]

    values, index = jax.vmap(mode)(*introsort(r))
    return from_rows(values, x.shape, dim), from_rows(index, x.shape, dim)


def lib_median(x, *, dim, ignore_nan, all_nan_index=0):
    """`torch.median` (`nanmedian` with `ignore_nan`) along `dim`, with `dim` kept
    (size 1), and its index. Eager's CPU kernel takes the lower median of the values
    ordered by value then index (an `nth_element` with that comparator), so a stable
    sort gives its index. `median`: a row with NaN gives its first NaN. `nanmedian`:
    the median of the numbers (NaN sorts last); a row of NaN only gives NaN at
    `all_nan_index`, where eager's `nth_element` leaves it (which depends on the
    row's length only)."""
    values, index = lib_sort(as_rows(x, dim), dim=1, descending=False, stable=True)
    n = values.shape[1]
    nan = jnp.isnan(values)
    numbers = n - jnp.sum(nan, axis=1)
    position = (
        jnp.maximum(numbers - 1, 0) // 2
        if ignore_nan
        else jnp.full_like(numbers, (n - 1) // 2)
    )
    median = jnp.take_along_axis(values, position[:, None], axis=1)[:, 0]
    where = jnp.take_along_axis(index, position[:, None], axis=1)[:, 0]
    if ignore_nan:
        where = jnp.where(numbers == 0, all_nan_index, where)
    else:
        # the first NaN in the row: the smallest index of those sorted last
        first_nan = jnp.min(jnp.where(nan, index, n), axis=1)
        median = jnp.where(numbers < n, jnp.nan, median)
        where = jnp.where(numbers < n, first_nan, where)
    return from_rows(median, x.shape, dim), from_rows(where, x.shape, dim)


def lib_searchsorted(sorted_sequence, values, *sorter, right):
    """`torch.searchsorted`: for each of `values`, the position in its row of
    `sorted_sequence` (the only row, for a 1-d one) before which it goes: after the
    equal ones with `right`. Eager's binary search (`cus_lower_bound`,
    `cus_upper_bound`) replayed, all values at once: the same answers where the rows
    are not sorted or hold NaN. `sorter` (optional): the order in which to read each
    row. Compared in float32 (float64) when either is float (float64), else in int32."""
    m = sorted_sequence.shape[-1]
    if jnp.issubdtype(sorted_sequence.dtype, jnp.floating) or jnp.issubdtype(
        values.dtype, jnp.floating
    ):
        common = jnp.promote_types(
            jnp.promote_types(sorted_sequence.dtype, values.dtype), jnp.float32
        )  # float32, or float64 where either is
        sorted_sequence = sorted_sequence.astype(common)
        values = values.astype(common)
    else:
        sorted_sequence = sorted_sequence.astype(jnp.int32)
        values = values.astype(jnp.int32)
    # one row of boundaries per row of values
    shape = values.shape
    if sorted_sequence.ndim == 1:
        table = sorted_sequence[None, :]
        order = sorter[0][None, :] if sorter else None
        v = values.reshape(1, -1)
    else:
        table = sorted_sequence.reshape(-1, m)
        order = sorter[0].reshape(-1, m) if sorter else None
        v = values.reshape(table.shape[0], -1)
    start = jnp.zeros(v.shape, jnp.int32)
    end = jnp.full(v.shape, m, jnp.int32)
    for _ in range(m.bit_length()):  # each halves end - start
        active = start < end
        mid = start + ((end - start) >> 1)
        at = jnp.minimum(mid, m - 1)
        if order is not None:
            at = jnp.take_along_axis(order, at, axis=1)
        pivot = jnp.take_along_axis(table, at, axis=1)
        after = ~(pivot > v) if right else ~(pivot >= v)
        start = jnp.where(active & after, mid + 1, start)
        end = jnp.where(active & ~after, mid, end)
    return (start.reshape(shape),)


def lib_histc(x, *, bins, low, high, bfloat16, checked=False):
    """`torch.histc`: counts of `x`'s elements in `bins` equal bins over [low, high],
    as eager's CPU kernel bins them: with low == high, the data's range (widened by 1
    each way if the data is one value); the edges rounded to the data's type; an
    element's bin `int((x - low) * bins / (high - low))` in that type (bfloat16 rounds
    after each operation), the last bin closed; NaN and elements outside not
    counted. With `checked`, also whether the data's range (used when low == high)
    is not finite, for which eager raises, and its low end."""
    x = x.reshape(-1).astype(jnp.float32)

    def rounded(v):
        return v.astype(jnp.bfloat16).astype(jnp.float32) if bfloat16 else v

    if low == high:
        lo, hi = jnp.min(x), jnp.max(x)
        same = lo == hi
        lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    else:
        lo, hi = jnp.float32(low), jnp.float32(high)
    lo, hi = rounded(lo), rounded(hi)
    inside = (x >= lo) & (x <= hi)
    scaled = rounded(
        rounded(rounded(x - lo) * rounded(jnp.float32(bins))) / rounded(hi - lo)
    )
    position = jnp.clip(scaled, 0, bins).astype(jnp.int32)
    position = jnp.where(position == bins, bins - 1, position)
    counts = (
        jnp.zeros((bins,), jnp.float32)
        .at[position]
        .add(inside.astype(jnp.float32), mode="drop")
    )
    if not checked:
        return (counts,)
    unbounded = ~(jnp.isfinite(lo) & jnp.isfinite(hi))
    return counts, unbounded, lo


def fused_multiply_add(a, b, c):
    """a * b + c in float32 rounded once, as a fused multiply-add gives it: the
    product's rounding error (Veltkamp's split, Dekker's product) and the sum's
    (Knuth's two-sum) added back before the last rounding."""

    # barriers: a compiler that contracted or reassociated these would lose the
    # errors they measure
    a, b, c = lax.optimization_barrier((a, b, c))

    def split(v):
        big = lax.optimization_barrier(v * jnp.float32(4097))
        high = lax.optimization_barrier(big - (big - v))
        return high, v - high

    product = lax.optimization_barrier(a * b)
    (a_hi, a_lo), (b_hi, b_lo) = split(a), split(b)
    product_error = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = lax.optimization_barrier(product + c)
    back = total - product
    sum_error = (product - (total - back)) + (c - back)
    return total + (sum_error + product_error)


def linspace_f32(start, end, steps):
    """`torch.linspace(start, end, steps)` in float32 as eager's CPU kernel computes
    it: the first half up from `start`, the second down from `end`, by a float32
    step, each point one fused multiply-add."""
    start, end = jnp.float32(start), jnp.float32(end)
    # a barrier: XLA would divide by a constant as a multiply by its reciprocal
    step = (end - start) / lax.optimization_barrier(jnp.float32(max(steps - 1, 1)))
    index = jnp.arange(steps, dtype=jnp.float32)
    up = fused_multiply_add(step, index, start)
    down = fused_multiply_add(-step, jnp.float32(steps - 1) - index, end)
    return jnp.where(jnp.arange(steps) < steps // 2, up, down)


def lib_histogram_bin_edges(x, *, bins, bounds=None, checked=False):
    """The bin edges of `torch.histogram`/`histogramdd` with bin counts `bins` (one a
    dim of `x`, shaped (M, D)): per dim, `bins + 1` points of a float32 linspace over
    `bounds` (low, high pairs: the op's `range`), else the data's min to max (0 to 1 for no data), an
    empty range widened by 0.5 each way. With `checked`, also whether a range taken
    from the data is not finite (eager raises) and the first such low end."""
    edges, bad, lows = [], [], []
    for dim, count in enumerate(bins):
        if bounds is not None:  # widened in float64, as eager does, then rounded
            lo, hi = bounds[2 * dim], bounds[2 * dim + 1]
            lo, hi = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
            edges.append(linspace_f32(lo, hi, count + 1))
            continue
        if x.shape[0] == 0:
            lo, hi = jnp.float32(0), jnp.float32(1)
        else:
            lo, hi = jnp.min(x[:, dim]), jnp.max(x[:, dim])
        bad.append(~(jnp.isfinite(lo) & jnp.isfinite(hi)))
        lows.append(lo)
        same = lo == hi
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        edges.append(linspace_f32(lo, hi, count + 1))
    if not checked:
        return tuple(edges)
    bad, lows = jnp.stack(bad), jnp.stack(lows)  # `checked` only without bounds
    return (*edges, jnp.any(bad), lows[jnp.argmax(bad)])


def histogram_bin(values, edges, local_search):
    """The bin of each of `values` among the increasing `edges` as eager's CPU
    kernel finds it, and whether it is counted (within the outer edges, not NaN):
    by binary search (`upper_bound`), or with `local_search` by linear interpolation
    in float32 corrected against the edges one bin either way; the last bin closed."""
    n = edges.shape[0]
    left, right = edges[0], edges[n - 1]
    inside = (values >= left) & (values <= right)
    if local_search:
        scaled = (values - left) * jnp.float32(n - 1) / (right - left)
        guess = jnp.where(inside, scaled, 0).astype(jnp.int32)
        low = jnp.maximum(guess - 1, 0)
        high = jnp.minimum(guess + 2, n)
        # upper_bound in edges[low:high]: the first edge there above the value
        window = low[:, None] + jnp.arange(3)[None, :]
        above = (window < high[:, None]) & (
            edges[jnp.clip(window, 0, n - 1)] > values[:, None]
        )
        first = jnp.where(jnp.any(above, 1), low + jnp.argmax(above, 1), high)
        position = first - 1
    else:
        position = jnp.sum(edges[None, :] <= values[:, None], 1) - 1
    position = jnp.where(position == n - 1, n - 2, position)
    return position, inside


def lib_histogramdd(x, *operands, weighted, density, local_search):
    """`torch.histogramdd` (and `histogram`, with D = 1) of the rows of `x`, shaped
    (M, D), over the bin edges of each dim (the operands after `x`, then the weight of
    each row if `weighted`): the count (or weight) in each bin, summed in float32;
    with `density`, divided by the total and by each bin's width."""
    d = x.shape[1]
    edges, weight = operands[:d], (operands[d].reshape(-1) if weighted else None)
    shape = tuple(e.shape[0] - 1 for e in edges)
    flat = jnp.zeros((x.shape[0],), jnp.int32)
    counted = jnp.ones((x.shape[0],), bool)
    for dim, e in enumerate(edges):
        position, inside = histogram_bin(x[:, dim], e, local_search)
        flat = flat * shape[dim] + jnp.clip(position, 0, shape[dim] - 1)
        counted = counted & inside
    amount = jnp.ones((x.shape[0],), jnp.float32) if weight is None else weight
    total = 1
    for n in shape:
        total *= n
    hist = (
        jnp.zeros((total,), jnp.float32)
        .at[jnp.where(counted, flat, total)]
        .add(amount.astype(jnp.float32), mode="drop")
        .reshape(shape)
    )
    if density:
        hist = hist / jnp.sum(hist)
        for dim, e in enumerate(edges):
            width = jnp.diff(e).reshape([-1 if k == dim else 1 for k in range(d)])
            hist = hist / width
    return (hist,)
