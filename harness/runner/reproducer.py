"""Write a failure out as what a user pastes into an upstream issue: one `repro.py`.

The script is standalone (tvm, tvm_ffi and numpy; onnx only when the failure is
in the ONNX frontend and the input is a `model.onnx`). It embeds the module as
TVMScript (the form TVM's own tests and upstream issues use), runs the stages
before the failing one exactly as the harness's path defines them (each
`Stage.call`: one spelled-out TVM call, not a second pipeline), then makes only
the failing call(s): the pass or stage, the copy, the extraction or compile on
the copy. Exit 1: reproduces, 0: does not, 2: cannot run here. Its header
states the TVM and tvm-ffi versions, the command that produced it, and the
original and reduced sizes.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import string

from harness import doors
from harness.tvmapi import copiers, targets
from harness.tvmapi.pipelines import Options, build
from harness.verdict import BadInput, Violation

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

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


def _literal(text: str) -> str:
    """`text` as a readable Python literal: raw triple quotes unless it holds them."""
    for quotes in ('"""', "'''"):
        escaped_end = "\\" + quotes[0] in text[-2:]
        if quotes not in text and not text.endswith(quotes[0]) and not escaped_end:
            return f"r{quotes}\n{text}\n{quotes}"
    return repr(text)


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
    if violation.stage == "import" and violation.phase == "stage":
        return "import"      # the ONNX frontend itself failed: the input is model.onnx
    if violation.kind in ("crash", "timeout"):
        return "process"
    if violation.kind == "mutated":
        return "mutated"
    if violation.kind == "lossy-roundtrip" and violation.phase == "copy":
        return "lossy-roundtrip"
    return "error"           # any other exception: the phase's failing call raises


def spec_of(*, violation: Violation, options: Options, versions: dict, command: str,
            script: str | None, sizes: str = "", copier_hook: str | None = None,
            title: str = "", deadline: float = 900.0, recipe: str | None = None) -> dict:
    """Everything a reproducer says, as data: render() turns it into repro.py, and a
    checked-in reproducer keeps it beside itself (NAME.json) so it can be regenerated
    when a template changes. `script` is the module's TVMScript (None: the ONNX model, or
    with `recipe`, the PyTorch door's model: the source that builds and exports it)."""
    stage = violation.stage
    if stage == "(whole path)":
        stage = build(options).stages[0].name
    template = template_of(violation)
    hooks, _ = _hooks_source(options, copier_hook if violation.phase == "copy" else None)
    # the pass sweep copies the pass's output; every other path the stage's input
    copy_output = options.path == "pass" and "output" in violation.detail
    lines = stage_lines(options, stage) if template != "import" else ""
    return {
        "template": template, "phase": violation.phase,
        "loader": ("torch" if recipe else "onnx") if template == "import" or script is None
        else "tvmscript", "recipe": (recipe or "").splitlines(),
        "frontend": "PyTorch" if recipe else "ONNX",
        "script": (script or "").splitlines(), "hooks": hooks.splitlines(),
        "title": title or f"{violation.kind} at {violation.where()} (tvm-extraction-harness)",
        "violation": violation.one_line().replace('"""', "'''"),
        "tvm_version": str(versions.get("tvm_version")),
        "tvm_ffi_version": str(versions.get("tvm_ffi_version")),
        "command": command, "sizes": sizes or "(not reduced)",
        "target": targets.target_dict(options.target, options.num_cores) if lines else {},
        "path": options.path, "stages": lines.splitlines(),
        "copy_call": "COPIERS_OVERRIDE['json']" if copier_hook
        else COPY_CALLS[copier_of(violation)],
        "stage": stage, "pass_name": violation.pass_name,
        "where": stage if violation.phase == "stage" else f"{stage} ({violation.phase})",
        "exact_json": copier_of(violation) != "tvmscript", "deadline": deadline,
        "hang": violation.kind == "timeout", "copy_output": copy_output,
        "what": "the output" if copy_output else "the input",
    }


@functools.cache
def _template(name: str) -> string.Template:
    with open(os.path.join(TEMPLATES, f"{name}.py.tmpl")) as handle:
        return string.Template(handle.read())


def render(spec: dict) -> str:
    """repro.py's text from its spec: pure text, no TVM (regeneration runs anywhere)."""
    stages = "\n".join(spec["stages"])
    values = {**spec, "stage_repr": repr(spec["stage"]),
              "pass_name_repr": repr(spec["pass_name"]),
              "copy_output_repr": repr(spec["copy_output"]), "hang_repr": repr(spec["hang"]),
              "exact_json": repr(spec["exact_json"]), "deadline": f"{spec['deadline']:g}",
              "target_repr": repr(spec["target"]), "stages": stages,
              "script": _literal("\n".join(spec["script"]).strip()),
              "recipe": "\n".join("        " + line for line in spec.get("recipe", [])),
              "frontend": spec.get("frontend", "ONNX")}
    sections = ["header", "load_" + spec["loader"]]
    text = "".join(_template(name).substitute(values) for name in sections)
    if spec["template"] != "import":
        if "meta_schedule()" in stages:
            text += _template("meta_schedule").substitute(values)
        if "tempfile." in stages:
            text = text.replace("import sys\n", "import sys\nimport tempfile\n", 1)
        if spec["hooks"]:
            text += "\n" + "\n".join(spec["hooks"]) + "\n"
        text += f"\nCOPY = {spec['copy_call']}\n"
        text += _template("stages").substitute(values)
        text += _template(f"call_{spec['phase']}").substitute(values)
    text += _template("main_" + spec["template"].replace("-", "_")).substitute(values)
    return text + _template("footer").substitute(values)


def write(out_dir: str, *, violation: Violation, options: Options, versions: dict,
          command: str, module=None, model=None, sizes: str = "",
          copier_hook: str | None = None, title: str = "",
          deadline: float = 900.0) -> str:
    """Write repro.py and its spec (reproducer.json; and model.onnx for an ONNX frontend
    failure); return repro.py's path. `deadline`: how long a crash or hang reproducer
    waits for the failing call."""
    os.makedirs(out_dir, exist_ok=True)
    frontend = template_of(violation) == "import"
    script = copiers.tvmscript(module).strip() if module is not None and not frontend else None
    recipe = doors.recipe(model) if script is None else None
    if script is None and recipe is None:
        import onnx
        onnx.save(model, os.path.join(out_dir, "model.onnx"))
    spec = spec_of(violation=violation, options=options, versions=versions, command=command,
                   script=script, sizes=sizes, copier_hook=copier_hook, title=title,
                   deadline=deadline, recipe=recipe)
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
