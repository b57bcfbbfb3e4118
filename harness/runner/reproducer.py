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

import os

from harness.tvmapi import compat
from harness.tvmapi.pipelines import Options, build
from harness.verdict import Violation

HEADER = '''#!/usr/bin/env python3
"""{title}

Seen:        {violation}
On:          apache-tvm {tvm_version} / apache-tvm-ffi {tvm_ffi_version}
Produced by: {command}
Input:       {sizes}
Run:         python repro.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import copy
import os
import sys
import tempfile  # noqa: F401  (the tune stage's work_dir)

try:
    import tvm
    import tvm_ffi
    from tvm import relax
    import tvm.relax.frontend.onnx  # noqa: F401
except ImportError as exc:  # not "reproduces": this python cannot run the check at all
    print(f"cannot run here: {{exc}}; use a python with apache-tvm")
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = tvm.target.Target({target!r})
KIND, STAGE, PASS, COPIER = {kind!r}, {stage!r}, {pass_name!r}, {copier!r}
'''

LOAD_TVMSCRIPT = '''
# The module, as TVMScript.
SCRIPT = {script!r}


def load():
    return tvm.script.from_source(SCRIPT)
'''

LOAD_ONNX = '''

def load():
    """The failure is in the ONNX frontend: the input is the (reduced) model.onnx."""
    import onnx
    from tvm.relax.frontend.onnx import from_onnx
    return from_onnx(onnx.load(os.path.join(HERE, "model.onnx")))
'''

BODY = '''

def meta_schedule():
    try:
        from tvm.s_tir import meta_schedule as ms
    except ImportError:
        from tvm import meta_schedule as ms
    return ms

{hooks}
# The path, stage by stage, as the harness runs it ({path} path).
STAGES = [
{stages}
]


def outcome(result):
    """What the final stage produced, comparably (tasks, or an executable's code)."""
    if isinstance(result, list):
        return sorted((str(t.task_name), int(t.weight),
                       tuple(tvm_ffi.structural_hash(f) for f in t.dispatched)) for t in result)
    return result.as_text() if hasattr(result, "as_text") else repr(result)


def input_of(stage_name, mod):
    """Run the stages before `stage_name`; the module that stage receives."""
    with tvm.transform.PassContext(opt_level=3):
        for name, run in STAGES:
            if name == stage_name:
                break
            mod = run(mod)
    return mod


def run_stage(stage_name, mod):
    run = dict(STAGES)[stage_name]
    with tvm.transform.PassContext(opt_level=3, config={{"testing.immutable_module": True}}):
        return run(mod)


def reproduces(message):
    print(f"reproduces: {{message}}")
    return 1


def main():
    source = load()
    if KIND == "lossy-roundtrip":
        return check_copy(source)
    if KIND == "crash":
        return check_crash(source)
    mod = input_of(STAGE, source)
    before_hash, before_json = tvm_ffi.structural_hash(mod), tvm.ir.save_json(mod)
    source_json = tvm.ir.save_json(source)
    try:
        run_stage(STAGE, mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what we reproduce
        first = (str(exc).strip().splitlines() or [""])[0]
        if KIND == "mutated" and "Immutable module has been modified" in first:
            return reproduces(f"stage {{STAGE}}: {{first}}")
        if KIND == "error":
            return reproduces(f"stage {{STAGE}} raised {{type(exc).__name__}}: {{first}}")
        raise
    if KIND == "mutated":
        if tvm_ffi.structural_hash(mod) != before_hash:
            return reproduces(f"stage {{STAGE}} mutated its input IRModule in place")
        if tvm.ir.save_json(mod) != before_json or tvm.ir.save_json(source) != source_json:
            return reproduces(f"stage {{STAGE}} changed its input outside structural equality")
    print("does not reproduce")
    return 0


COPIERS = {{
    "deepcopy": copy.deepcopy,
    "json": lambda mod: tvm.ir.load_json(tvm.ir.save_json(mod)),
    "tvmscript": lambda mod: tvm.script.from_source(mod.script(show_meta=True)),
}}


def check_copy(source):
    """The module the failing stage receives, copied: equal, and equal in outcome."""
    mod = source if STAGE == "import" else input_of(STAGE, source)
    try:
        dup = COPIERS[COPIER](mod)
    except Exception as exc:  # noqa: BLE001 - the seed bug: the copy itself fails
        return reproduces(f"{{COPIER}} copy failed: {{type(exc).__name__}}: {{exc}}")
    mismatch = tvm_ffi.get_first_structural_mismatch(mod, dup)
    if mismatch is not None:
        return reproduces(f"{{COPIER}} copy differs at {{mismatch[0]}}")
    if tvm.ir.save_json(dup) != tvm.ir.save_json(mod):
        return reproduces(f"{{COPIER}} copy's JSON text differs (a field outside structural "
                          "equality)")
    if STAGE != "import":
        try:
            got = outcome(run_stage(STAGE, dup))
        except Exception as exc:  # noqa: BLE001
            return reproduces(f"stage {{STAGE}} fails on the {{COPIER}} copy: "
                              f"{{type(exc).__name__}}: {{str(exc).splitlines()[0]}}")
        if got != outcome(run_stage(STAGE, mod)):
            return reproduces(f"stage {{STAGE}} gives another outcome on the {{COPIER}} copy")
    print("does not reproduce")
    return 0


def check_crash(source):
    """Run the failing stage in a child: dying by a signal is the reproduction."""
    mod = input_of(STAGE, source)
    pid = os.fork()
    if pid == 0:
        run_stage(STAGE, mod)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return reproduces(f"stage {{STAGE}} killed the process with signal "
                          f"{{os.WTERMSIG(status)}}")
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _hooks_source(options: Options, copier: str | None) -> tuple[str, str | None]:
    """The injected pass / copier hook file's text, embedded, and the copier name."""
    files, lines = set(), []
    if options.inject_pass:
        path, name = options.inject_pass.rsplit(":", 1)
        files.add(path)
        lines.append(f"_injected = HOOKS[{name!r}]\n"
                     "INJECTED = _injected if isinstance(_injected, tvm.transform.Pass) else "
                     "tvm.transform.module_pass(lambda m, _c: _injected(m), opt_level=0, "
                     "name='injected')")
    if copier:
        path, expr = copier.split(":", 1)
        files.add(path)
        lines.append(f"COPIERS_OVERRIDE = {{'json': eval({expr!r}, HOOKS)}}")
    if not files:
        return "", None
    if len(files) > 1:
        raise ValueError("an injected pass and a copier must come from the same file")
    with open(files.pop()) as handle:
        text = handle.read()
    return ("\n# The user's hook file, embedded.\nHOOKS = {}\nexec(compile("
            f"{text!r}, 'hooks', 'exec'), HOOKS)\n" + "\n".join(lines) + "\n"), "json"


def stage_lines(options: Options) -> str:
    """The path's stages as `(name, lambda mod: CALL)` lines, from the same definitions."""
    return "\n".join(f"    ({stage.name!r}, lambda mod: {stage.call}),"
                     for stage in build(options).stages)


def copier_of(violation: Violation) -> str | None:
    """The copier a lossy-roundtrip violation names ("(deepcopy)", "deepcopy copy...")."""
    for name in ("deepcopy", "json", "tvmscript"):
        if name in violation.path or violation.detail.startswith(name) or \
                f"{name} copy" in violation.detail:
            return name
    return None


def write(out_dir: str, *, violation: Violation, options: Options, versions: dict,
          command: str, module=None, model=None, sizes: str = "",
          copier_hook: str | None = None, title: str = "") -> str:
    """Write repro.py (and model.onnx for a frontend failure); return repro.py's path."""
    os.makedirs(out_dir, exist_ok=True)
    hooks, _ = _hooks_source(options, copier_hook)
    stage = violation.stage.split(" (")[0]
    if violation.kind == "mutated" and stage == "(whole path)":
        stage = build(options).stages[0].name
    text = HEADER.format(
        title=title or f"{violation.kind} at {violation.where()} (tvm-extraction-harness)",
        violation=violation.one_line().replace('"""', "'''"),
        tvm_version=versions.get("tvm_version"), tvm_ffi_version=versions.get("tvm_ffi_version"),
        command=command, sizes=sizes or "(not reduced)",
        target={"kind": options.target, "num-cores": options.num_cores},
        kind=violation.kind, stage=stage, pass_name=violation.pass_name,
        copier=copier_of(violation))
    if module is not None:
        text += LOAD_TVMSCRIPT.format(script=compat.tvmscript(module))
    else:
        import onnx
        onnx.save(model, os.path.join(out_dir, "model.onnx"))
        text += LOAD_ONNX
    text += BODY.format(hooks=hooks, path=options.path, stages=stage_lines(options))
    if "COPIERS_OVERRIDE" in hooks:
        text = text.replace("\n\ndef check_copy(source):",
                            "\nCOPIERS.update(COPIERS_OVERRIDE)\n\n\ndef check_copy(source):")
    path = os.path.join(out_dir, "repro.py")
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return path
