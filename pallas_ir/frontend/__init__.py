"""torch → ta: trace a torch function to ATen and emit a ta module (see `torch_to_ta`)."""

from pallas_ir.frontend.torch_to_ta import (
    UnsupportedError,
    check_node,
    torch_to_ta,
    trace_to_aten,
)

__all__ = ["UnsupportedError", "check_node", "torch_to_ta", "trace_to_aten"]
