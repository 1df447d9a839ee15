"""Symbol lookup for verifiers: xDSL's `SymbolTable.lookup_symbol` scans the module's
ops on every call, so verifying a module with L launches of K kernels took L x K steps
(4.9 s of a 28k-op module's verify). Within `indexed_symbols(module)` the lookups of
that module's top-level symbols read a dict built once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable

_INDEX: ContextVar[tuple[Operation, dict[str, Operation]] | None] = ContextVar(
    "_INDEX", default=None
)


@contextmanager
def indexed_symbols(table: Operation) -> Iterator[None]:
    """Within it, `lookup_symbol` finds the top-level symbols of `table` (a module, not
    changed inside: a verify only reads) by name in a dict, the first of a name as
    xDSL's scan does."""
    symbols: dict[str, Operation] = {}
    for o in table.regions[0].block.ops:
        if (symbol := o.get_trait(SymbolOpInterface)) is not None:
            name = symbol.get_sym_attr_name(o)
            if name is not None:
                symbols.setdefault(name.data, o)
    token = _INDEX.set((table, symbols))
    try:
        yield
    finally:
        _INDEX.reset(token)


def lookup_symbol(op: Operation, name: SymbolRefAttr) -> Operation | None:
    """`SymbolTable.lookup_symbol(op, name)`, read from the index of `indexed_symbols`
    where `op`'s nearest symbol table is the one indexed."""
    index = _INDEX.get()
    if index is not None and not name.nested_references:
        anchor = op.parent_op()
        while anchor is not None and not anchor.has_trait(SymbolTable):
            anchor = anchor.parent_op()
        if anchor is index[0]:
            return index[1].get(name.root_reference.data)
    return SymbolTable.lookup_symbol(op, name)
