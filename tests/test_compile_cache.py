"""Compile time: the on-disk cache (`pallas_ir.cache`), the phase profile
(`pallas_ir.profile_compiles`) and kernels shared between identical layers
(`share-identical-kernels` and the emitter's jitted calls)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch
from support.programs import aot_failures

import pallas_ir
from pallas_ir.cache import CompileCache, cache_root, entry_key
from pallas_ir.registry import default_pipeline


def two_layers(cache: str | Path) -> dict:
    """Two identical layers compiled with a cache and run: the profile's counts and the
    largest difference from eager. A child process runs it to show what a second
    process reads back; the checks of damaged entries run it in this process."""
    torch.manual_seed(0)
    layers = torch.nn.Sequential(
        torch.nn.Linear(128, 128),
        torch.nn.GELU(),
        torch.nn.Linear(128, 128),
        torch.nn.GELU(),
    ).eval()
    x = torch.randn(16, 128)
    with torch.no_grad(), pallas_ir.profile_compiles() as profile:
        got = pallas_ir.compile(layers, [x], cache=cache)(x)
        want = layers(x)
    return {
        "programs": profile.programs,
        "cache_hits": profile.cache_hits,
        "phases": sorted(profile.seconds),
        "error": float((got - want).abs().max()),
    }


_CHILD = (
    "import json, sys\n"
    "sys.path[:0] = [sys.argv[2]]\n"
    "from test_compile_cache import two_layers\n"
    "print(json.dumps(two_layers(sys.argv[1])))\n"
)


def _child(cache: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cache), str(Path(__file__).parent)],
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,  # the child's stderr goes into the assertion's message
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_program_back(tmp_path: Path) -> None:
    first = _child(tmp_path)
    assert first["programs"] == 1 and first["cache_hits"] == 0
    assert {"tile", "jax export", "xla compile"} <= set(first["phases"])
    assert first["error"] < 1e-5
    (entry,) = [p for p in tmp_path.iterdir() if p.name != "xla"]
    assert {p.name for p in entry.iterdir()} == {"module.json", "program-interpret-cpu"}
    assert any((tmp_path / "xla").iterdir())  # jax's executables, beside ours

    second = _child(tmp_path)
    assert second["programs"] == 1 and second["cache_hits"] == 1
    # neither the passes nor jax's tracing of the kernels ran again
    assert not {"tile", "jax export"} & set(second["phases"])
    assert second["error"] < 1e-5

    # A corrupt entry is a miss: compiled again, correct, and written whole again.
    for name, damage in (("module.json", b"x"), ("program-interpret-cpu", b"\0" * 7)):
        path = entry / name
        path.write_bytes(path.read_bytes()[:-50] + damage)
    third = two_layers(tmp_path)
    assert third["cache_hits"] == 0
    assert {"tile", "jax export"} <= set(third["phases"])
    assert third["error"] < 1e-5
    assert two_layers(tmp_path)["cache_hits"] == 1


def test_an_entry_holds_the_emitted_module(tmp_path: Path) -> None:
    def fn(x):
        return torch.softmax(x * 2, -1)

    x = torch.randn(64, 256)
    cold = pallas_ir.compile(fn, [x], cache=tmp_path)
    warm = pallas_ir.compile(fn, [x], cache=tmp_path)
    assert (cold.compile_profile.cache_hits, warm.compile_profile.cache_hits) == (0, 1)
    assert "tile" not in warm.compile_profile.seconds
    assert warm.source == cold.source
    # the module and the IR stages are lowered again from the ta module on demand
    assert str(warm.module) == str(cold.module)
    assert warm.ir["tile"] == cold.ir["tile"]
    # another chip is another entry
    other = pallas_ir.compile(fn, [x], chip="v6e", cache=tmp_path)
    assert other.compile_profile.cache_hits == 0
    off = pallas_ir.compile(fn, [x], cache=False)
    assert off.compile_profile.cache_hits == 0


def test_cache_files_are_checked_and_replaced_whole(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    assert cache.read("k", "f") is None
    cache.write("k", "f", b"payload")
    assert cache.read("k", "f") == b"payload"
    (tmp_path / "k" / "f").write_bytes((tmp_path / "k" / "f").read_bytes() + b"!")
    assert cache.read("k", "f") is None  # the checksum no longer matches

    # Writers racing on one entry: every read sees one writer's whole payload.
    payloads = [bytes([n]) * 200_000 for n in range(4)]
    seen: list[bytes | None] = []

    def write(payload: bytes) -> None:
        for _ in range(20):
            cache.write("race", "f", payload)

    def read() -> None:
        for _ in range(200):
            seen.append(cache.read("race", "f"))

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    threads.append(threading.Thread(target=read))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s is None or s in payloads for s in seen)
    assert cache.read("race", "f") in payloads
    assert [p.name for p in (tmp_path / "race").iterdir()] == ["f"]  # no temporaries


def test_the_key_and_the_folder(monkeypatch, tmp_path: Path) -> None:
    ta = "builtin.module {}"
    key = entry_key(ta, pipeline=default_pipeline("v5e"), chip="v5e")
    assert key == entry_key(ta, chip="v5e", pipeline=default_pipeline("v5e"))
    assert key != entry_key(ta, pipeline=default_pipeline("v6e"), chip="v6e")
    assert key != entry_key(ta + " ", pipeline=default_pipeline("v5e"), chip="v5e")

    monkeypatch.delenv("PALLAS_IR_CACHE", raising=False)
    monkeypatch.delenv("PALLAS_IR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "pallas_ir"
    monkeypatch.setenv("PALLAS_IR_CACHE_DIR", str(tmp_path / "moved"))
    assert cache_root() == tmp_path / "moved"
    monkeypatch.setenv("PALLAS_IR_CACHE", "0")
    assert cache_root() is None
    assert cache_root(tmp_path / "named") == tmp_path / "named"
    assert cache_root(False) is None


def test_the_profile_names_every_phase() -> None:
    x = torch.randn(32, 128)
    with pallas_ir.profile_compiles() as profile:
        k = pallas_ir.compile(lambda x: torch.relu(x) + 1, [x], cache=False)
        torch.testing.assert_close(k(x), torch.relu(x) + 1)
    stages = [s.split("{")[0] for s in default_pipeline("v5e").split(",")]
    want = {"torch trace", "frontend", "verify", *stages, "emit", "exec"}
    assert want | {"jax trace", "jax lower", "xla compile"} <= set(profile.seconds)
    assert profile.programs == 1 and profile.cache_hits == 0
    assert set(k.compile_profile.seconds) == set(profile.seconds)
    assert all(s >= 0 for s in profile.seconds.values())
    assert "xla compile" in profile.table()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_only_inside_a_compile(enabled: bool) -> None:
    """A compile runs with Python's cyclic collector off (`gc_paused`: the function is
    traced with it off) and leaves it as the caller had it, under both APIs."""
    seen: list[bool] = []

    def program(x):
        seen.append(gc.isenabled())
        return torch.softmax(x, -1)

    x = torch.randn(16, 128, requires_grad=True)
    model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.GELU())
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        compiled = pallas_ir.compile(program, [x.detach()], cache=False)
        assert seen and not any(seen)
        assert gc.isenabled() is enabled
        torch.testing.assert_close(compiled(x.detach()), torch.softmax(x.detach(), -1))
        assert gc.isenabled() is enabled
        torch.compile(model, backend="pallas_ir")(x).sum().backward()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_identical_layers_share_one_kernel_and_one_jitted_call() -> None:
    torch.manual_seed(0)
    # Four linear + GELU layers: each kernel is a product with the previous layer's
    # bias and GELU in its prologue, so the second and third layers' are the same.
    layers = torch.nn.Sequential(
        *(m for _ in range(4) for m in (torch.nn.Linear(128, 128), torch.nn.GELU()))
    ).eval()
    x = torch.randn(16, 128)
    with torch.no_grad():
        k = pallas_ir.compile(layers, [x], cache=False)
        torch.testing.assert_close(k(x), layers(x), rtol=1e-5, atol=1e-5)
    assert len(k.cost_report().calls) == 4
    assert k.source.count("pl.pallas_call(") == 3
    assert k.source.count("def k") == 6  # three kernels, three jitted calls
    assert not aot_failures({"layers": k}, "v5e")
