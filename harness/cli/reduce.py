"""`python -m harness reduce CASE_OR_ONNX` (and `check --reduce`): a failure, minimized.

Checks the input once (the failure to keep), reduces it (harness.reduce), then
writes OUT/repro.py: the reduced module as TVMScript making exactly the failing
call, or the reduced model.onnx when the failure is in the ONNX frontend.
"""
from __future__ import annotations

import os
import shlex
import sys

from harness.catalog import cases as catalog
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.reduce import onnx_steps
from harness.reduce.driver import BEST, Reducer
from harness.runner import reproducer
from harness.tvmapi import compat
from harness.tvmapi.pipelines import LAYOUTS, PATH_NAMES, Options
from harness.verdict import EXIT_PASS, EXIT_VIOLATED, BadInput


def reduce_case(case_name: str, options: Options, out_dir: str, budget: float,
                timeout: float, resume: bool, command: str) -> int:
    case = catalog.resolve(case_name)
    os.makedirs(out_dir, exist_ok=True)
    reducer = Reducer(options, out_dir, budget, timeout)
    model = reducer.resume() if resume else None
    if model is None:
        original = case.model()
        first = run_isolated(case_name, options, timeout=timeout)
        if first.verdict in ("pass", "unsupported", "harness-error"):
            print(f"reduce: {case.id}: {first.verdict}; nothing to reduce")
            return EXIT_PASS if first.verdict == "pass" else first.exit_code
        reducer.start(original, first)
        reducer.save(original)
        model = original
    else:
        reducer.log(f"resuming: {reducer.state.nodes} nodes, "
                    f"phases done: {', '.join(reducer.state.phases_done) or 'none'}")
    best = reducer.run(model)
    return _write(reducer, best, options, out_dir, command)


def _write(reducer: Reducer, best, options: Options, out_dir: str, command: str) -> int:
    result = reducer.check(best)   # the final model, checked once more, gives the violation
    matching = [v for v in result.violations if reducer.signature.found_in(result)
                and v.kind == reducer.signature.kind and v.stage == reducer.signature.stage]
    if not matching:
        print(f"reduce: the reduced model no longer fails as {reducer.signature.describe()}; "
              f"kept {os.path.join(out_dir, BEST)}", file=sys.stderr)
        return EXIT_VIOLATED
    violation = matching[0]
    frontend = violation.stage == "import" and violation.kind in ("error", "unsupported")
    module = None if frontend else compat.from_onnx(best)
    state = reducer.state
    lines = compat.tvmscript(module).count("\n") + 1 if module is not None else 0
    sizes = (f"{state.original_nodes} ONNX nodes -> {onnx_steps.size(best)} nodes"
             + (f", {lines} lines of TVMScript" if lines else "")
             + f" ({state.candidates} candidates, {reducer.elapsed():.0f} s)")
    path = reproducer.write(out_dir, violation=violation, options=options,
                            versions=result.__dict__, command=command, module=module,
                            model=best if frontend else None, sizes=sizes)
    print(f"reduce: {reducer.signature.describe()}")
    print(f"reduce: {sizes}")
    print(f"reduce: reproducer: {path}")
    return EXIT_VIOLATED


def cmd_reduce(args) -> int:
    case = catalog.resolve(args.case)
    options = Options(layout=args.layout or case.layout, target=args.target, path=args.path)
    if options.layout not in LAYOUTS:
        raise BadInput(f"--layout must be one of {', '.join(LAYOUTS)}")
    out_dir = args.out or os.path.join("reductions", os.path.basename(case.id).replace(".onnx", ""))
    command = shlex.join(["python", "-m", "harness", "reduce", args.case, "--path", args.path,
                          "--layout", options.layout])
    return reduce_case(args.case, options, out_dir, args.budget, args.timeout, args.resume,
                       command)


def add_reduce_options(parser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="where best.onnx, the state and repro.py go "
                             "(default reductions/CASE)")
    parser.add_argument("--budget", type=float, default=600.0, metavar="S",
                        help="seconds to spend reducing (default 600); the best so far is kept")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted reduction from OUT")


def register(sub) -> None:
    p = sub.add_parser("reduce", help="reduce a failing case or ONNX file to a short reproducer")
    p.add_argument("case", metavar="CASE_OR_ONNX")
    p.add_argument("--path", choices=PATH_NAMES, default="extract")
    p.add_argument("--layout", choices=sorted(LAYOUTS), default=None)
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds per candidate before it counts as a timeout")
    add_reduce_options(p)
    p.set_defaults(func=cmd_reduce)
