"""torch → ta: trace a torch function to ATen and emit a ta module (see `torch_to_ta`)."""

from pallas_ir.frontend.torch_to_ta import UnsupportedError, torch_to_ta

__all__ = ["UnsupportedError", "torch_to_ta"]
