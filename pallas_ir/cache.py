"""The on-disk compile cache: a program compiled once is read back by later processes.

An entry is keyed by a hash of the ta module the frontend wrote, the pass pipeline, the
chip, the runtime checks, how the host passes each input, and the versions of
pallas-ir (its sources, so that an edited checkout never reads an entry an older one
wrote), xDSL, jax, jaxlib and libtpu. It holds the emitted Python module and, once the
program has run, the program traced and lowered by `jax.export` for the backend and
mode (interpret or Mosaic) it ran in: tracing and lowering a program of many
interpreted kernels costs as much as compiling it. jax's own persistent compilation
cache is pointed under the same folder for the XLA executables, unless the user has
pointed it elsewhere. (A serialized XLA executable would skip more, but jax 0.10's
`serialize_executable` on CPU loads in another process and then fails at the first
call: "Function multiply_bitcast_fusion not found".)

Where: `$PALLAS_IR_CACHE_DIR`, else `$XDG_CACHE_HOME/pallas_ir`, else
`~/.cache/pallas_ir`; `PALLAS_IR_CACHE=0` turns it off. `pallas_ir.compile(...,
cache=False)` turns it off for one program, and `cache=path` puts its entry there
(even with `PALLAS_IR_CACHE=0`).

Every file is written to a temporary name in its folder, then renamed over the entry,
so concurrent writers leave one whole entry, never a torn one. Each file starts with
the sha256 of its payload: a file that does not match (truncated, edited, written by
something else) is a miss, recompiled and written again, never trusted.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import tempfile
from pathlib import Path
from typing import Any

_CHECKSUM_BYTES = 64  # a hex sha256


def cache_root(setting: bool | str | os.PathLike = True) -> Path | None:
    """The cache folder for a `cache=` setting (True: the environment's), or None
    where the cache is off."""
    if setting is False:
        return None
    if setting is not True:  # a folder the caller names, whatever the environment says
        return Path(setting)
    if os.environ.get("PALLAS_IR_CACHE", "1") == "0":
        return None
    if where := os.environ.get("PALLAS_IR_CACHE_DIR"):
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pallas_ir"


@functools.cache
def _versions() -> str:
    """pallas-ir's sources and the versions of what compiles and runs its output."""
    sources = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        sources.update(str(path.relative_to(package)).encode())
        sources.update(path.read_bytes())
    versions = [f"pallas_ir-sources={sources.hexdigest()}"]
    for dist in ("xdsl", "jax", "jaxlib", "libtpu"):
        try:
            versions.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist}=none")
    return ";".join(versions)


def entry_key(ta_module: str, **options: object) -> str:
    """The hash naming the entry of `ta_module` compiled with `options`."""
    digest = hashlib.sha256()
    digest.update(_versions().encode())
    for name in sorted(options):
        digest.update(f"\n{name}={options[name]!r}".encode())
    digest.update(b"\n")
    digest.update(ta_module.encode())
    return digest.hexdigest()


class CompileCache:
    """Entries under `root`, one folder each, holding named files."""

    def __init__(self, root: Path):
        self.root = root

    def read(self, key: str, name: str) -> bytes | None:
        """The payload of `name` in entry `key`, or None: absent, unreadable or
        corrupt."""
        try:
            data = (self.root / key / name).read_bytes()
        except OSError:
            return None
        checksum, payload = data[:_CHECKSUM_BYTES], data[_CHECKSUM_BYTES:]
        if checksum != hashlib.sha256(payload).hexdigest().encode():
            return None
        return payload

    def write(self, key: str, name: str, payload: bytes) -> None:
        """Store `payload` as `name` of entry `key` (write, then rename). A cache that
        cannot be written (read-only, full) is skipped: it only saves time."""
        folder = self.root / key
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(hashlib.sha256(payload).hexdigest().encode())
                    f.write(payload)
                os.replace(temporary, folder / name)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return


def use_jax_compilation_cache(root: Path) -> None:
    """Point jax's persistent compilation cache under `root`, unless the user has
    pointed it somewhere (then theirs is used as it is)."""
    import jax

    if jax.config.jax_compilation_cache_dir is not None:
        return
    jax.config.update("jax_compilation_cache_dir", str(root / "xla"))
    # jax's default keeps only executables that took a second to compile; most
    # programs compile faster, and each one missed is compiled again by every process.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)


def exported_program(program: Any, args: Any) -> Any:
    """The jitted `program` traced and lowered for `args` (a `jax.export.Exported`),
    or None where jax cannot export it (the program then runs as it is)."""
    import jax

    try:
        return jax.export.export(program)(*args)
    except Exception:  # noqa: BLE001 - the plain jit path raises the program's own errors
        return None


def serialized(exported: Any) -> bytes | None:
    """An exported program as bytes, or None where jax cannot serialize it."""
    try:
        return bytes(exported.serialize())
    except Exception:  # noqa: BLE001 - a program that cannot be kept is compiled each time
        return None


def deserialized(blob: bytes | None) -> Any:
    """The `jax.export.Exported` an entry holds, or None: no entry, or one this jax
    cannot read (it is traced and lowered again)."""
    if blob is None:
        return None
    import jax

    try:
        return jax.export.deserialize(bytearray(blob))
    except Exception:  # noqa: BLE001 - any entry that does not load is a miss
        return None
