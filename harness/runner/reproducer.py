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

import importlib.util
import os

from harness.tvmapi import compat
from harness.tvmapi.pipelines import Options, build
from harness.verdict import BadInput, Violation

HEADER = '''#!/usr/bin/env python3
\"\"\"{title}

Seen:        {violation}
On:          apache-tvm {tvm_version} / apache-tvm-ffi {tvm_ffi_version}
Produced by: {command}
Input:       {sizes}
Run:         python repro.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
\"\"\"
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax
except ImportError as exc:  # not "reproduces": this python cannot run the check at all
    print(f"cannot run here: {{exc}}; use a python with apache-tvm")
    sys.exit(2)
'''

LOAD_TVMSCRIPT = '''
SCRIPT = {script}


def load():
    try:
        return tvm.script.from_source(SCRIPT)
    except Exception as exc:  # noqa: BLE001 - another release's TVMScript: not "reproduces"
        print(f"cannot run here: this TVM cannot parse the module's TVMScript "
              f"({{type(exc).__name__}}: {{(str(exc).splitlines() or [''])[0]}})")
        sys.exit(2)

'''

LOAD_ONNX = '''

def load():
    \"\"\"The failure is in the ONNX frontend: the input is the (reduced) model.onnx.\"\"\"
    import os
    import onnx
    from tvm.relax.frontend.onnx import from_onnx
    return from_onnx(onnx.load(os.path.join(os.path.dirname(__file__), "model.onnx")))
'''

META_SCHEDULE = '''

def meta_schedule():
    try:
        from tvm.s_tir import meta_schedule as ms
    except ImportError:
        from tvm import meta_schedule as ms
    return ms
'''

STAGES = '''
TARGET = tvm.target.Target({target!r})
# The {path} path up to the failing stage, each stage as the harness runs it.
STAGES = [
{stages}
]


def run(mod, until, alone=False):
    \"\"\"The stages before `until`; with alone, `until` itself (a plain PassContext, as
    users run it). "import" is load() itself: nothing runs before or for it here.\"\"\"
    if until == "import":
        return mod
    with tvm.transform.PassContext(opt_level=3):
        if alone:
            return dict(STAGES)[until](mod)
        for name, stage in STAGES:
            if name == until:
                break
            mod = stage(mod)
    return mod


def outcome(result):
    \"\"\"What a stage produced, comparably (as the harness compares it).\"\"\"
    if isinstance(result, list):   # tuning tasks
        return sorted((str(t.task_name), int(t.weight),
                       tuple(tvm_ffi.structural_hash(f) for f in t.dispatched)) for t in result)
    if hasattr(result, "as_text"):   # an executable
        return result.as_text()
    return tvm_ffi.structural_hash(result, map_free_vars=True)
'''

# The call that failed, by the phase it was seen in (verdict.PHASES): the stage itself,
# the checks after it (a hash and a save_json of what it returned), a copy of its input,
# the stage a second time on the same input.
FAILING_CALL = {
    "stage": '''

def failing_call(mod):
    return run(mod, {stage!r}, alone=True)
''',
    "checks": '''

def failing_call(mod):
    \"\"\"What the harness checks after the stage: its result hashed and serialized.\"\"\"
    out = run(mod, {stage!r}, alone=True)
    if isinstance(out, tvm.ir.IRModule):
        tvm_ffi.structural_hash(out)
        tvm.ir.save_json(out)
    tvm_ffi.structural_hash(mod)
    return tvm.ir.save_json(mod)
''',
    "copy": '''

def failing_call(mod):
    \"\"\"The copy the harness made ({what} of the stage), and the stage run on it.\"\"\"
    if {copy_output!r}:
        mod = run(mod, {stage!r}, alone=True)
    return run(COPY(mod), {stage!r}, alone=True) if {stage!r} != "import" else COPY(mod)
''',
    "determinism": '''

def failing_call(mod):
    \"\"\"The stage twice on the same input: the second run must give the same outcome.\"\"\"
    first = outcome(run(mod, {stage!r}, alone=True))
    second = outcome(run(mod, {stage!r}, alone=True))
    if first != second:
        raise AssertionError("a second run on the same input gave another outcome")
    return second
''',
    "process": '''

def failing_call(mod):
    return mod   # before any stage: loading the module is the call
''',
}

MAIN = {
    "error": '''

def main():
    mod = run(load(), {stage!r})
    try:
        failing_call(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: {where} raised {{type(exc).__name__}}: "
              f"{{(str(exc).splitlines() or [''])[0]}}")
        return 1
    print("does not reproduce")
    return 0
''',
    "import": '''

def main():
    try:
        load()
    except Exception as exc:  # noqa: BLE001 - the frontend's failure is what this reproduces
        print(f"reproduces: the ONNX frontend raised {{type(exc).__name__}}: "
              f"{{(str(exc).splitlines() or [''])[0]}}")
        return 1
    print("does not reproduce: the model imports")
    return 0
''',
    "mutated": '''

@tvm.ir.instrument.pass_instrument
class InputWatch:
    \"\"\"Whether pass {pass_name!r} changes the module it receives (its structural hash or
    its JSON text), at any depth of nesting.\"\"\"

    def __init__(self):
        self.stack, self.mutated = [], False

    def run_before_pass(self, mod, info):
        watched = info.name == {pass_name!r}
        self.stack.append((info.name, mod, (tvm_ffi.structural_hash(mod), tvm.ir.save_json(mod))
                           if watched else None))

    def run_after_pass(self, mod, info):
        while self.stack:   # a pass whose exception an outer pass caught never ends
            name, before, fingerprint = self.stack.pop()
            if name == info.name:
                break
        now = (tvm_ffi.structural_hash(before), tvm.ir.save_json(before))
        self.mutated = self.mutated or (fingerprint is not None and now != fingerprint)


def main():
    source = load()
    mod = run(source, {stage!r})
    before = (tvm_ffi.structural_hash(mod), tvm.ir.save_json(mod), tvm.ir.save_json(source))
    watch = InputWatch()
    with tvm.transform.PassContext(opt_level=3, instruments=[watch]):
        dict(STAGES)[{stage!r}](mod)
    if watch.mutated:
        print("reproduces: pass {pass_name} mutated the module it was given, in place")
        return 1
    after = (tvm_ffi.structural_hash(mod), tvm.ir.save_json(mod), tvm.ir.save_json(source))
    if after != before:
        print("reproduces: {stage} changed its input IRModule in place")
        return 1
    print("does not reproduce")
    return 0
''',
    "lossy-roundtrip": '''

EXACT_JSON = {exact_json}   # a JSON copy must give back the original's JSON text


def main():
    mod = run(load(), {stage!r})
    if {copy_output!r}:
        mod = run(mod, {stage!r}, alone=True)
    try:
        dup = COPY(mod)
    except Exception as exc:  # noqa: BLE001 - the seed bug: the copy itself fails
        print(f"reproduces: the copy failed: {{type(exc).__name__}}: {{exc}}")
        return 1
    mismatch = tvm_ffi.get_first_structural_mismatch(mod, dup, True)
    if mismatch is not None or (EXACT_JSON and tvm.ir.save_json(dup) != tvm.ir.save_json(mod)):
        print(f"reproduces: the copy differs from the original at {{mismatch and mismatch[0]}}")
        return 1
    if {stage!r} != "import" and not {copy_output!r}:
        expected = outcome(run(mod, {stage!r}, alone=True))
        if outcome(run(dup, {stage!r}, alone=True)) != expected:
            print("reproduces: {stage} gives another outcome on the copy")
            return 1
    print("does not reproduce")
    return 0
''',
    # A crash or a hang: the failing call runs in a forked child, watched for DEADLINE s.
    "process": '''

DEADLINE = {deadline:g}   # seconds (the harness's timeout when it saw this)


def main():
    import os
    import signal
    import time
    mod = run(load(), {stage!r})
    pid = os.fork()
    if pid == 0:   # the child makes the call that may kill or hang the process
        failing_call(mod)
        os._exit(0)
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if {hang!r}:
            print(f"reproduces: {where} did not finish within {{DEADLINE:g}} s")
            return 1
        print(f"does not reproduce: {where} hangs (no result within "
              f"{{DEADLINE:g}} s), it does not crash")
        return 0
    if not {hang!r} and os.WIFSIGNALED(status):
        print(f"reproduces: {where} killed the process "
              f"(signal {{os.WTERMSIG(status)}})")
        return 1
    print("does not reproduce: {where} finished")
    return 0
''',
}
MAIN["determinism"] = MAIN["error"]

COPY_CALLS = {
    "deepcopy": "__import__('copy').deepcopy",
    "json": "lambda mod: tvm.ir.load_json(tvm.ir.save_json(mod))",
    "tvmscript": "lambda mod: tvm.script.from_source(mod.script(show_meta=True))",
    None: "__import__('copy').deepcopy",
}

FOOTER = '''

if __name__ == "__main__":
    sys.exit(main())
'''


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
        if quotes not in text and not text.endswith(quotes[0]) and "\\" + quotes[0] not in text[-2:]:
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


def write(out_dir: str, *, violation: Violation, options: Options, versions: dict,
          command: str, module=None, model=None, sizes: str = "",
          copier_hook: str | None = None, title: str = "",
          deadline: float = 900.0) -> str:
    """Write repro.py (and model.onnx for a frontend failure); return repro.py's path.
    `deadline`: how long a crash or hang reproducer waits for the failing call."""
    os.makedirs(out_dir, exist_ok=True)
    stage = violation.stage
    if stage == "(whole path)":
        stage = build(options).stages[0].name
    template = template_of(violation)
    hooks, _ = _hooks_source(options, copier_hook if violation.phase == "copy" else None)
    copy_call = "COPIERS_OVERRIDE['json']" if copier_hook else COPY_CALLS[copier_of(violation)]
    # the pass sweep copies the pass's output; every other path the stage's input
    copy_output = options.path == "pass" and "output" in violation.detail
    text = HEADER.format(
        title=title or f"{violation.kind} at {violation.where()} (tvm-extraction-harness)",
        violation=violation.one_line().replace('"""', "\'\'\'"),
        tvm_version=versions.get("tvm_version"), tvm_ffi_version=versions.get("tvm_ffi_version"),
        command=command, sizes=sizes or "(not reduced)")
    if module is not None and template != "import":
        text += LOAD_TVMSCRIPT.format(script=_literal(compat.tvmscript(module).strip()))
    else:
        import onnx
        onnx.save(model, os.path.join(out_dir, "model.onnx"))
        text += LOAD_ONNX
    fields = dict(stage=stage, phase=violation.phase, pass_name=violation.pass_name,
                  where=stage if violation.phase == "stage" else f"{stage} ({violation.phase})",
                  exact_json=copier_of(violation) != "tvmscript", deadline=deadline,
                  hang=violation.kind == "timeout", copy_output=copy_output,
                  what="the output" if copy_output else "the input")
    if template != "import":
        stages = stage_lines(options, stage)
        if "meta_schedule()" in stages:
            text += META_SCHEDULE
        if "tempfile." in stages:
            text = text.replace("import sys\n", "import sys\nimport tempfile\n", 1)
        text += hooks
        text += f"\nCOPY = {copy_call}\n"
        text += STAGES.format(target=compat.target_dict(options.target, options.num_cores),
                              path=options.path, stages=stages)
        text += FAILING_CALL[violation.phase].format(**fields)
    text += MAIN[template].format(**fields)
    text += FOOTER
    path = os.path.join(out_dir, "repro.py")
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return path
