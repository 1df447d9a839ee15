"""Where compile time goes: seconds by phase, for one compiled program and for every
compile inside a `profile_compiles()` block (a model under `torch.compile` compiles a
forward and a backward graph).

```python
with pallas_ir.profile_compiles() as profile:
    loss = model(x, y)
    loss.backward()
print(profile.table())
```

Phases: `torch trace` (the function to an ATen graph), `frontend` (ATen to ta), one
per pass of the pipeline, `verify`, `emit` (the Python module), `exec` (running its
text), `cache` (reading and writing the on-disk cache), and at the first call `jax
trace`, `jax lower` and `xla compile`.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(eq=False)  # one profile is one collector, found by identity
class CompileProfile:
    """Seconds by phase, in the order phases first ran, and the programs compiled."""

    seconds: dict[str, float] = field(default_factory=dict)
    programs: int = 0
    cache_hits: int = 0

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    def total(self) -> float:
        return sum(self.seconds.values())

    def table(self) -> str:
        total = self.total() or 1.0
        width = max([len(p) for p in self.seconds] + [5])
        lines = [
            f"{'phase':<{width}}  seconds  share",
            *(
                f"{p:<{width}}  {s:7.3f}  {100 * s / total:4.1f}%"
                for p, s in self.seconds.items()
            ),
            (
                f"{'total':<{width}}  {self.total():7.3f}  "
                f"({self.programs} programs, {self.cache_hits} from the cache)"
            ),
        ]
        return "\n".join(lines)


_ACTIVE: list[CompileProfile] = []
_RUNNING: list[list[float]] = []  # per running phase: the seconds of its inner phases


@contextlib.contextmanager
def profile_compiles() -> Iterator[CompileProfile]:
    """Collect the phases of every compile and first call inside the block."""
    with collecting(CompileProfile()) as profile:
        yield profile


@contextlib.contextmanager
def collecting(profile: CompileProfile) -> Iterator[CompileProfile]:
    """Record the phases that run inside the block into `profile` too."""
    _ACTIVE.append(profile)
    try:
        yield profile
    finally:
        _ACTIVE.remove(profile)


def count_program(from_cache: bool) -> None:
    for profile in _ACTIVE:
        profile.programs += 1
        profile.cache_hits += from_cache


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as `name` into every collecting profile, less the phases that
    run inside it (each second is counted once, in the innermost phase)."""
    start = time.perf_counter()
    _RUNNING.append([0.0])
    try:
        yield
    finally:
        (inner,) = _RUNNING.pop()
        seconds = time.perf_counter() - start
        if _RUNNING:
            _RUNNING[-1][0] += seconds
        for profile in _ACTIVE:
            profile.add(name, seconds - inner)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block; the collector is back as it was
    after it. A compile allocates millions of short-lived objects (fake tensors, IR
    ops, jax tracers) and keeps the IR alive throughout, so each collection walks the
    whole growing IR and frees little: measured on the tiny GPT's training step, about
    1 s of 4.4-5.2 s read from the cache and 1.4-1.8 s of its cold compile. What the
    compile leaves unreachable is freed by the collections after it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
