"""The `xdsl.universe` entry point: lets plain `xdsl-opt` use pallas-ir's dialects,
passes and `-t python`."""

from xdsl.universe import Universe

from pallas_ir.registry import get_all_dialects, get_all_passes, get_all_targets

PALLAS_IR_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
