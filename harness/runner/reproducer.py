"""Write a failure out as what a user pastes into an upstream issue: one `repro.py`.

The script is standalone (tvm, tvm_ffi and numpy; onnx only when the failure is
in the ONNX frontend and the input is a `model.onnx`). It embeds the module as
TVMScript (the form TVM's own tests and upstream issues use), or as JSON where its
TVMScript does not round-trip on this TVM (harness.runner.embedding: a repro.py that
cannot load its module reproduces nothing), runs the stages before the failing one
exactly as the harness's path defines them (each `Stage.call`: one spelled-out TVM
call, not a second pipeline), then makes only the failing call(s): the pass or
stage, the copy, the extraction or compile on the copy. Exit 1: reproduces, 0: does
not, 2: cannot run here. Its header states the TVM and tvm-ffi versions, the command
that produced it, and the original and reduced sizes.

What it says is decided once, as data (harness.runner.reproducer_spec: the spec,
kept beside it as reproducer.json); `render` turns a spec into its text with no TVM,
so `regenerate` gives a checked-in reproducer today's templates anywhere.
"""
from __future__ import annotations

import functools
import json
import os
import re
import string

from harness import doors
from harness.options import Options
from harness.runner import embedding
from harness.runner.reproducer_spec import answer_spec, spec_of, template_of
from harness.tvmapi import compile_prefix
from harness.verdict import BadInput, Outcome, Phase, Violation

# The writer's names its callers use (the spec's functions live in reproducer_spec).
__all__ = ["regenerate", "render", "write"]

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


def _literal(text: str) -> str:
    """`text` as a readable Python literal: raw triple quotes unless it holds them."""
    for quotes in ('"""', "'''"):
        escaped_end = "\\" + quotes[0] in text[-2:]
        if quotes not in text and not text.endswith(quotes[0]) and not escaped_end:
            return f"r{quotes}\n{text}\n{quotes}"
    return repr(text)


@functools.cache
def _compile_prefix_source() -> str:
    """tvmapi/compile_prefix.py's code as the harness runs it (it imports nothing but tvm),
    after its docstring, which speaks of the harness."""
    with open(compile_prefix.__file__, encoding="utf-8") as handle:
        code = handle.read().split('"""', 2)[2]
    return "The input tvm.compile hands a pass (harness/tvmapi/compile_prefix.py).\n" + \
        code.lstrip("\n")


def _template(name: str) -> string.Template:
    with open(os.path.join(TEMPLATES, f"{name}.py.tmpl")) as handle:
        return string.Template(handle.read())


# A stage line of a spec: `    ('name', lambda mod: CALL),` (stage_lines writes them).
_STAGE_LINE = re.compile(r"^\s*\((['\"])(?P<name>.*?)\1, lambda mod: (?P<call>.*)\),\s*$")


def _stages(spec: dict) -> list[tuple[str, str]]:
    """(name, call on `mod`) of each stage up to the failing one, which is the last."""
    stages = []
    for line in spec["stages"]:
        match = _STAGE_LINE.match(line)
        if match is None:
            raise BadInput(f"a reproducer spec's stage line is not `(name, lambda mod: CALL)`: "
                           f"{line.strip()!r}")
        stages.append((match["name"], match["call"]))
    if spec["template"] != "import" and spec["stage"] != "import" and (
            not stages or stages[-1][0] != spec["stage"]):
        raise BadInput(f"a reproducer spec's stages do not end at its failing stage "
                       f"{spec['stage']!r}")
    return stages


def _uses_failing_call(spec: dict) -> bool:
    """The error and crash/hang mains make one call, and it is `failing_call` unless the
    stage itself fails (phase "stage"): then `failing_stage` is the call."""
    return spec["template"] in ("error", "process") and spec["phase"] != Phase.STAGE


def _uses_failing_stage(spec: dict, values: dict) -> bool:
    """Whether anything calls the failing stage alone: not the mutation check (it runs the
    stage under its own instrument), not a crash while loading (phase "process")."""
    if spec["template"] == "lossy-roundtrip":
        return bool(values["copy_output_line"] or values["outcome_check"])
    if spec.get("answer"):
        return spec["answer"]["compare"] == "stage"
    return spec["template"] != "mutated" and spec["phase"] != Phase.PROCESS


def render(spec: dict) -> str:
    """repro.py's text from its spec: pure text, no TVM (regeneration runs anywhere). It
    defines only what it uses: the copy, the outcome comparison, the stages before the
    failing one and the target each appear only where the failing call needs them."""
    stages = _stages(spec)
    values = _values(spec, stages)
    load = _template("load_" + spec["loader"]).substitute(values)
    code = "" if spec["template"] == "import" else _calls(spec, values, stages)
    main = {"process": "hang" if spec["hang"] else "crash"}.get(spec["template"],
                                                               spec["template"])
    code += _template("main_" + main.replace("-", "_")).substitute(values)
    imports = _imports(_without_literals(values, load) + code)
    header = _template("header").substitute({**values, "imports": imports})
    return header + load + code + _template("footer").substitute(values)


def _values(spec: dict, stages: list[tuple[str, str]]) -> dict:
    """The template fields: the spec's, and the lines decided here (what a call runs)."""
    importing = spec["stage"] == "import"
    before = stages[:-1] if not importing else []
    width = max((len(call) for _, call in before), default=0)

    def staged(expr: str) -> str:
        return expr if importing else f"failing_stage({expr})"
    copy_output = "    mod = failing_stage(mod)   # the stage's output is what was copied\n" \
        if spec["copy_output"] and not importing else ""
    outcome_check = "" if importing or spec["copy_output"] else (
        "    expected = outcome(failing_stage(mod))\n"
        "    if outcome(failing_stage(dup)) != expected:\n"
        f"        print(\"reproduces: {spec['stage']} gives another outcome on the copy\")\n"
        "        return 1\n")
    return {
        **spec, "stage_repr": repr(spec["stage"]), "pass_name_repr": repr(spec["pass_name"]),
        "deadline": f"{spec['deadline']:g}",
        "script": _literal("\n".join(spec["script"]).strip()),
        "loader_note": spec.get("loader_note", ""),   # older specs: TVMScript, no note
        "recipe": "\n".join("        " + line for line in spec.get("recipe", [])),
        "frontend": spec.get("frontend", "ONNX"),
        "prepared": "prepare(load())" if before else "load()",
        "prepared_source": "prepare(source)" if before else "source",
        "prepare_lines": "\n".join(f"        mod = {call:<{width}}   # {name}"
                                    for name, call in before),
        "failing_expr": stages[-1][1] if stages and not importing else "mod",
        "failing": "failing_call" if _uses_failing_call(spec) else "failing_stage",
        "stage_of_mod": staged("mod"), "stage_of_copy": staged("COPY(mod)"),
        "copy_output_line": copy_output, "outcome_check": outcome_check,
        "json_differs": " or tvm.ir.save_json(dup) != tvm.ir.save_json(mod)"
        if spec["exact_json"] else "",
        **_answer_values(spec),
    }


def _answer_values(spec: dict) -> dict:
    """A wrong result's lines: what is compared with what, and what the finding claims."""
    answer = spec.get("answer")
    if not answer:
        return {}
    prepared = "prepare(load())" if len(spec["stages"]) > 1 else "load()"
    compare = answer["compare"]
    if compare == "run":   # the error template calls failing_call (call_answer)
        lines, claim = [], ""
    elif compare == "copy":
        lines = [f"mod = {prepared}", "want = answer(mod, arrays)",
                 "got = answer(COPY(mod), arrays)"]
        claim = "the copy computes other numbers than the module it copies"
    elif compare == "stage":
        lines = [f"before = {prepared}", "want = answer(before, arrays)",
                 "got = answer(failing_stage(before), arrays)"]
        claim = f"after {spec['stage']} the module computes other numbers than before it"
    else:
        lines = [f"# {answer['reference']}'s answer on these inputs, computed by the harness",
                 "want = expected()", f"got = answer({prepared}, arrays)"]
        claim = f"TVM's answer is not {answer['reference']}'s"
    return {"answer_inputs": repr([tuple(item) for item in answer["inputs"]]),
            "answer_positive": repr(answer["positive"]),
            "answer_entry": repr(answer.get("entry") or "main"),
            "answer_lines": "\n".join("        " + line for line in lines),
            "answer_exact": repr(compare == "copy"), "answer_claim": claim,
            "answer_expected_block": _EXPECTED.format(literal=_literal(answer["expected"]))
            if answer["expected"] else ""}


_EXPECTED = '''# The framework's answer on these inputs (base64 of a compressed .npz).
EXPECTED = {literal}


def expected():
    import base64
    import io

    import numpy
    archive = numpy.load(io.BytesIO(base64.b64decode(EXPECTED.strip())))
    return [archive[f"arr_{{index}}"] for index in range(len(archive.files))]


'''


def _calls(spec: dict, values: dict, stages: list[tuple[str, str]]) -> str:
    """Everything the main needs beside load(): the hooks, the copy, the target, the
    stages before the failing one, the failing stage and the failing call."""
    calls = " ".join(call for _, call in stages)
    failing_call = _uses_failing_call(spec)
    text = ""
    if "meta_schedule()" in calls:
        text += _template("meta_schedule").substitute(values)
    if "compile_until(" in calls:   # the sweep's `compiled` point: the harness's own code
        text += "\n\n# " + _compile_prefix_source()
    if spec["hooks"]:
        text += "\n\n" + "\n".join(spec["hooks"]).strip("\n") + "\n"
    answering = bool(spec.get("answer"))   # a wrong result, or the compiled module's run failing
    if spec["template"] == "lossy-roundtrip" or (failing_call and spec["phase"] == Phase.COPY) \
            or (answering and spec["answer"]["compare"] == "copy"):
        text += f"\n\nCOPY = {spec['copy_call']}\n"
    if "TARGET" in calls or answering:
        text += f"\n\nTARGET = tvm.target.Target({spec['target']!r})\n"
    if spec["stage"] != "import":
        if len(stages) > 1:
            text += _template("prepare").substitute(values)
        if _uses_failing_stage(spec, values):
            text += _template("failing_stage").substitute(values)
    if (failing_call and spec["phase"] == Phase.DETERMINISM) or values["outcome_check"] and \
            spec["template"] == "lossy-roundtrip":
        text += _template("outcome").substitute(values)
    if answering:
        text += _template("answer").substitute(values)
    if failing_call:
        text += _template(f"call_{spec['phase']}").substitute(values)
    return text


def _without_literals(values: dict, load: str) -> str:
    """load()'s text without the embedded module or model source (as `_values` wrote them
    into it), nor the comment on why the module is JSON: what they hold is not code of the
    reproducer's (a TVMScript string naming `relax.nn.conv2d` needs no import)."""
    for literal in (values["script"], values["recipe"], values["loader_note"]):
        if literal.strip():
            load = load.replace(literal, "")
    return load


_IMPORTS = (   # (what the code uses, the import it needs), in the order they are written
    (r"(?<![\w.])tvm\.", "import tvm"),
    (r"(?<![\w.])tvm_ffi\.", "import tvm_ffi"),
    (r"(?<![\w.])relax\.", "from tvm import relax"),
    (r"(?<![\w.])from_onnx\(", "from tvm.relax.frontend.onnx import from_onnx"),
    (r"(?<![\w.])from_exported_program\(",
     "from tvm.relax.frontend.torch import from_exported_program"),
)


def _imports(code: str) -> str:
    """The imports `code` uses, and only those: TVM's in a try block whose failure is
    "cannot run here" (exit 2), never "reproduces"."""
    tvm_imports = "".join(f"    {line}\n" for pattern, line in _IMPORTS
                          if re.search(pattern, code))
    needs = " and torch" if "from_exported_program(" in code else ""
    standard = "import sys\n" + ("import tempfile\n" if "tempfile." in code else "")
    return (f"{standard}\ntry:\n{tvm_imports}"
            "except ImportError as exc:  # not \"reproduces\": this python cannot run the check\n"
            f"    print(f\"cannot run here: {{exc}}; use a python with apache-tvm{needs}\")\n"
            "    sys.exit(2)\n")


def write(out_dir: str, *, violation: Violation, options: Options, versions: dict,
          command: str, module=None, model=None, sizes: str = "",
          copier_hook: str | None = None, title: str = "",
          deadline: float = 900.0) -> str:
    """Write repro.py and its spec (reproducer.json; and model.onnx for an ONNX frontend
    failure); return repro.py's path. `deadline`: how long a crash or hang reproducer
    waits for the failing call. The module goes in as TVMScript, or as JSON where its
    TVMScript does not round-trip (embedding.embed decides; our own bug there raises)."""
    os.makedirs(out_dir, exist_ok=True)
    frontend = template_of(violation) == "import"
    embedded = embedding.embed(module) if module is not None and not frontend else None
    door = doors.of_model(model) if embedded is None else None   # repro.py loads the model
    if door is not None and door.reproducer == "onnx":
        import onnx
        onnx.save(model, os.path.join(out_dir, "model.onnx"))
    answer = answer_spec(violation, options, module if module is not None else
                         doors.to_relax(model), model) \
        if violation.kind == Outcome.WRONG_RESULT or violation.phase == Phase.ANSWER else None
    spec = spec_of(violation=violation, options=options, versions=versions, command=command,
                   embedded=embedded, sizes=sizes, copier_hook=copier_hook, title=title,
                   deadline=deadline, recipe=door.recipe(model) if door else None,
                   answer=answer,
                   **({"loader": door.reproducer, "frontend": door.frontend} if door else {}))
    with open(os.path.join(out_dir, "reproducer.json"), "w") as handle:
        json.dump(spec, handle, indent=1)
    return _write_text(os.path.join(out_dir, "repro.py"), render(spec))


def _write_text(path: str, text: str) -> str:
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return path


def regenerate(folder: str, check: bool = False) -> list[str]:
    """Re-render every NAME.py in `folder` that has a NAME.json spec beside it (a template
    fix reaches every checked-in reproducer); the ones that changed (with `check`: would)."""
    changed = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(folder, name)) as handle:
            text = render(json.load(handle))
        target = os.path.join(folder, name.removesuffix(".json") + ".py")
        current = open(target).read() if os.path.exists(target) else None
        if current != text:
            changed.append(target)
            if not check:
                _write_text(target, text)
    return changed
