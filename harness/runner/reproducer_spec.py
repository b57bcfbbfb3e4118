"""What a reproducer says, as data: its spec (reproducer.json beside repro.py).

`spec_of` decides everything repro.py holds (which main template, how it loads the
module, the stages before the failing one as the path defines them, the copy, the
target, the header's facts) and nothing is decided again when it is rendered: a spec
renders to the same repro.py wherever it is rendered (harness.runner.reproducer), so a
checked-in reproducer can be regenerated when a template changes.
"""
from __future__ import annotations

import importlib.util
import os

from harness.options import Options
from harness.runner.embedding import Embedding
from harness.tvmapi import targets
from harness.tvmapi.pipelines import build
from harness.verdict import BadInput, Outcome, Phase, Violation

COPY_CALLS = {
    "deepcopy": "__import__('copy').deepcopy",
    "json": "lambda mod: tvm.ir.load_json(tvm.ir.save_json(mod))",
    "tvmscript": "lambda mod: tvm.script.from_source(mod.script(show_meta=True))",
    None: "__import__('copy').deepcopy",
}


def hook_file(target: str) -> str:
    """The source file of a hook's MODULE (or FILE.py), to embed it in a reproducer."""
    if target.endswith(".py") or os.sep in target:
        return target
    spec = importlib.util.find_spec(target)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise BadInput(f"cannot embed hook module {target!r} in a reproducer: no Python "
                       "source file for it")
    return spec.origin


def _hooks_source(options: Options, copier: str | None) -> tuple[str, str | None]:
    """The injected pass / copier hook file's text, embedded, and the copier name."""
    files, lines = set(), []
    if options.inject_pass:
        path, name = options.inject_pass.rsplit(":", 1)
        files.add(hook_file(path))
        lines.append(f"_injected = HOOKS[{name!r}]\n"
                     "INJECTED = _injected if isinstance(_injected, tvm.transform.Pass) else "
                     "tvm.transform.module_pass(lambda m, _c: _injected(m), opt_level=0, "
                     "name='injected')")
    if copier:
        path, expr = copier.split(":", 1)
        files.add(hook_file(path))
        lines.append(f"COPIERS_OVERRIDE = {{'json': eval({expr!r}, HOOKS)}}")
    if not files:
        return "", None
    if len(files) > 1:
        raise BadInput("an injected pass and a copier must come from the same file to be "
                       "embedded in one reproducer")
    with open(files.pop()) as handle:
        text = handle.read()
    return ("\n# The user's hook file, embedded.\nHOOKS = {}\nexec(compile("
            f"{text!r}, 'hooks', 'exec'), HOOKS)\n" + "\n".join(lines) + "\n"), "json"


def stage_lines(options: Options, until: str) -> str:
    """The path's stages up to `until`, as `(name, lambda mod: CALL)` lines, from the
    same definitions the runner uses."""
    lines = []
    for stage in build(options).stages:
        lines.append(f"    ({stage.name!r}, lambda mod: {stage.call}),")
        if stage.name == until:
            break
    return "\n".join(lines)


def copier_of(violation: Violation) -> str | None:
    """The built-in copier a lossy-roundtrip violation was seen with (None: the default)."""
    return violation.copier if violation.copier in COPY_CALLS else None


def template_of(violation: Violation) -> str:
    """Which MAIN template reproduces this violation."""
    if violation.stage == "import" and violation.phase == Phase.STAGE:
        return "import"      # the ONNX frontend itself failed: the input is model.onnx
    if violation.kind in (Outcome.CRASH, Outcome.TIMEOUT):
        return "process"
    if violation.kind == Outcome.MUTATED:
        return "mutated"
    if violation.kind == Outcome.LOSSY_ROUNDTRIP and violation.phase == Phase.COPY:
        return "lossy-roundtrip"
    if violation.kind == Outcome.WRONG_RESULT:
        return "wrong-result"
    return "error"           # any other exception: the phase's failing call raises


def spec_of(*, violation: Violation, options: Options, versions: dict, command: str,
            embedded: Embedding | None, sizes: str = "", copier_hook: str | None = None,
            title: str = "", deadline: float = 900.0, recipe: str | None = None,
            loader: str = "onnx", frontend: str = "ONNX", answer: dict | None = None) -> dict:
    """Everything a reproducer says, as data: render() turns it into repro.py, and a
    checked-in reproducer keeps it beside itself (NAME.json) so it can be regenerated
    when a template changes. `embedded` is the module as repro.py holds it: its TVMScript,
    or its JSON where that does not round-trip (harness.runner.embedding; `loader_note`
    says why). None: the ONNX model, or with `recipe`, the door's model (the source that
    builds and exports it); `loader` and `frontend` are then what the model's door says
    (Door.reproducer, .frontend). `answer`: a wrong result's comparison (answer_spec)."""
    stage = violation.stage
    if stage == "(whole path)":
        stage = build(options).stages[0].name
    template = template_of(violation)
    hooks, _ = _hooks_source(options, copier_hook if violation.phase == Phase.COPY else None)
    # the pass sweep copies the pass's output; every other path the stage's input
    copy_output = options.path == "pass" and violation.copied == "output"
    lines = stage_lines(options, stage) if template != "import" else ""
    return {
        "template": template, "phase": violation.phase,
        "loader": loader if template == "import" or embedded is None else embedded.loader,
        "loader_note": embedded.why if embedded is not None else "",
        "recipe": (recipe or "").splitlines(), "frontend": frontend,
        "script": (embedded.text if embedded is not None else "").splitlines(),
        "hooks": hooks.splitlines(),
        "title": title or f"{violation.kind} at {violation.where()}",
        "violation": violation.one_line().replace('"""', "'''"),
        "tvm_version": str(versions.get("tvm_version")),
        "tvm_ffi_version": str(versions.get("tvm_ffi_version")),
        "command": command, "sizes": sizes or "(not reduced)",
        "target": targets.target_dict(options.target, options.num_cores) if lines else {},
        "path": options.path, "stages": lines.splitlines(),
        "copy_call": "COPIERS_OVERRIDE['json']" if copier_hook
        else COPY_CALLS[copier_of(violation)],
        "stage": stage, "pass_name": violation.pass_name,
        "where": stage if violation.phase == Phase.STAGE else f"{stage} ({violation.phase})",
        "exact_json": copier_of(violation) != "tvmscript", "deadline": deadline,
        "hang": violation.kind == Outcome.TIMEOUT, "copy_output": copy_output,
        "what": "the output" if copy_output else "the input",
        "answer": answer,
    }


def comparison_of(violation: Violation, final_stage: str) -> str:
    """What a wrong result was compared with: a copy's answer (`copy`), the failing
    stage's input's (`stage`), or the framework's (`framework`); `run` for the compiled
    module failing to run at all."""
    if violation.kind != Outcome.WRONG_RESULT:
        return "run"   # the compiled module failed to run on the drawn inputs
    if violation.phase == Phase.COPY:
        return "copy"
    return "framework" if violation.stage == final_stage else "stage"


def answer_spec(violation: Violation, options: Options, source, model) -> dict:
    """A wrong result's comparison as data: the inputs drawn (shapes, dtypes, domain), and
    for a framework's answer its numbers, embedded (base64 of a compressed .npz)."""
    import base64
    import io

    import numpy

    from harness.oracles import numbers
    from harness.oracles.answers import References
    from harness.tvmapi import execute, ir
    specs = execute.input_specs(source)
    positive = ir.count_calls(source, numbers.POSITIVE_DOMAIN_OPS) > 0
    compare = comparison_of(violation, build(options).final.name)
    spec = {"compare": compare, "inputs": [[list(spec.shape), spec.dtype] for spec in specs],
            "positive": positive, "reference": None, "expected": None,
            "entry": execute.entry_name(source)}
    if compare == "framework" and model is not None:
        arrays = numbers.draw(specs, 0, positive)
        found = References(model).answers(arrays)
        if isinstance(found, str):
            raise BadInput(f"the reference cannot answer now: {found}")
        name, want, _ = found
        buffer = io.BytesIO()
        numpy.savez_compressed(buffer, *want)
        spec["reference"] = name
        spec["expected"] = base64.b64encode(buffer.getvalue()).decode()
    return spec
