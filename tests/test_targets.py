"""Targets beyond the host: which compile here without a device, what they make, and that a
target lacking its code generator or toolchain is `unsupported` with TVM's reason, never a
finding against TVM (harness/tvmapi/targets.py measures it, never assumes)."""
from __future__ import annotations

import json
import types

import pytest
from helpers import SMALL_CASE, cli_here

from harness import pytest_plugin
from harness.catalog import known_issues
from harness.cli.matrix import row_name, target_list
from harness.options import Options
from harness.process.isolate import run_isolated
from harness.verdict import EXIT_CANNOT_TEST, Outcome

# Measured on the 0.25 to 0.27 wheels without a GPU: no device runtime is registered, so
# the kernels' source is kept (CUDA C, Metal, OpenCL C, WGSL) and no compiler is called.
DEVICE_FREE = ("cuda", "metal", "opencl", "webgpu")


def _probe(text: str):
    from harness.tvmapi import targets
    return targets.probe(targets.make_target(text, 1))


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("kind", DEVICE_FREE)
def test_a_gpu_target_compiles_to_host_code_and_its_kernels_source(kind):
    found = _probe(kind)
    # Where a device runtime is registered TVM compiles the kernels itself (cuda: NVRTC);
    # lacking that toolchain is then the one other answer, said with TVM's words.
    assert found.compiles or found.missing, found
    if found.compiles:
        assert found.produces == ("llvm", kind), found


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("text, produces", [
    ("llvm", ("llvm",)), ("c", ("c",)),
    ("llvm -mtriple=aarch64-linux-gnu", ("llvm",)),
    ("llvm -mtriple=riscv64-unknown-linux-gnu", ("llvm",)),
])
def test_host_targets_compile(text, produces):
    found = _probe(text)
    assert found.compiles and found.produces == produces, found


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("text, lacks", [
    ("vulkan", "target.build.vulkan is not registered"),   # the wheels have no SPIR-V codegen
    ("rocm", "ROCm toolchain"),
    ("llvm -mtriple=m68k-linux-gnu", "LLVM backend for this triple"),
])
def test_a_target_lacking_its_codegen_or_toolchain_says_what(text, lacks):
    found = _probe(text)
    if found.compiles:
        pytest.skip(f"{text} compiles on this machine: {found.produces}")
    assert lacks in found.missing and not found.error, found


@pytest.mark.in_process_tvm
def test_the_refusal_table_reads_tvms_words_and_leaves_other_failures_to_the_path(monkeypatch):
    from harness.tvmapi import calls, targets

    def refuses(words):
        def compile_module(mod, target):
            raise RuntimeError(words)   # raised outside the harness: TVM's, as classified
        return compile_module
    monkeypatch.setattr(targets, "_PROBED", {})
    monkeypatch.setattr(calls, "compile_module", refuses("Cannot find ROCm path"))
    target = targets.make_target("cuda", 1)
    assert "ROCm toolchain" in targets.probe(target).missing
    with pytest.raises(targets.TVMUnavailable, match="cannot compile here.*ROCm"):
        targets.require_codegen(target)
    monkeypatch.setattr(targets, "_PROBED", {})
    monkeypatch.setattr(calls, "compile_module", refuses("Check failed: a bug"))
    found = targets.probe(target)   # not a refusal: not decided here, the path shows it
    assert not found.missing and "a bug" in found.error
    targets.require_codegen(target)


@pytest.mark.in_process_tvm
def test_a_failed_probe_is_not_kept_for_the_rest_of_the_process(monkeypatch):
    """A fault seeded into one test's compile once answered every later probe of the
    worker (test order decided whether `llvm` compiled): only machine facts are kept."""
    from harness.tvmapi import calls, copiers, targets
    monkeypatch.setattr(targets, "_PROBED", {})
    target = targets.make_target("llvm", 1)
    with monkeypatch.context() as seeded:
        seeded.setattr(calls, "compile_module", lambda mod, target: copiers.load_json("{x"))
        assert "JSONDecodeError" in targets.probe(target).error
    assert targets.probe(target).produces == ("llvm",)


@pytest.mark.in_process_tvm
def test_the_sweep_runs_a_gpu_targets_passes_inside_it():
    from harness.tvmapi import pipelines
    options = Options(path="pass", sweep_pass="FoldConstant", sweep_point="legalized")
    assert "TARGET" not in pipelines.build(options).final.call      # llvm: as it was
    gpu = pipelines.build(Options(**{**options.to_json(), "target": "cuda"}))
    assert all(stage.call.startswith("(TARGET.__enter__(), ") for stage in gpu.stages)


def test_an_unavailable_target_is_unsupported_with_its_reason():
    code, out, _ = cli_here("check", SMALL_CASE, "--path", "compile", "--target", "vulkan",
                            "--json", "--quiet")
    data = json.loads(out)
    if data["verdict"] != Outcome.UNSUPPORTED:
        pytest.skip(f"vulkan compiles on this machine ({data['verdict']})")
    assert code == EXIT_CANNOT_TEST and data["status"] == Outcome.UNSUPPORTED
    assert "target.build.vulkan is not registered" in data["violations"][0]["detail"]


def test_compile_for_cuda_checks_the_kernels_source_too():
    """The path on cuda: dlight's schedules, the GPU lowering, the CUDA source kept. The
    guard sees the registered dlight mutation; the copies compile to the same code."""
    result = run_isolated(SMALL_CASE, Options(path="compile", target="cuda"), timeout=600)
    if result.verdict == Outcome.UNSUPPORTED:
        pytest.skip(result.violations[0].detail)
    judgement = known_issues.judge(result)
    assert judgement.status in (Outcome.PASS, Outcome.KNOWN), judgement.lines()
    assert not [v for v in result.violations if v.kind != Outcome.MUTATED], result.violations
    assert result.outcome_count == 3   # VM bytecode, host LLVM IR, CUDA source


def test_matrix_targets_are_a_list_of_kinds_or_one_target_each():
    assert target_list(None) == ["llvm"]
    assert target_list(["cuda,metal", "llvm -mattr=+avx2,+fma", "cuda",
                        '{"kind": "llvm", "mcpu": "a,b"}']) == [
        "cuda", "metal", "llvm -mattr=+avx2,+fma", '{"kind": "llvm", "mcpu": "a,b"}']
    assert row_name("yolov3-tiny", "cuda", ["llvm"]) == "yolov3-tiny"
    assert row_name("yolov3-tiny", "cuda", ["cuda", "metal"]) == "yolov3-tiny [cuda]"


def test_the_nightly_compiles_the_compile_cases_for_the_device_free_targets():
    config = types.SimpleNamespace(getoption=lambda name: "llvm")
    tagged = types.SimpleNamespace(tags=(pytest_plugin.COMPILE_TAG,))
    nightly = ["llvm", *pytest_plugin.NIGHTLY_TARGETS]
    assert pytest_plugin.targets_for(config, tagged, "compile") == nightly
    assert pytest_plugin.targets_for(config, tagged, "extract") == ["llvm"]
    assert pytest_plugin.targets_for(config, types.SimpleNamespace(tags=()), "compile") == ["llvm"]
    chosen = types.SimpleNamespace(getoption=lambda name: "metal")
    assert pytest_plugin.targets_for(chosen, tagged, "compile") == ["metal"]
