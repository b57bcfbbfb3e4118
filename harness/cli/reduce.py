"""`python -m harness reduce CASE_OR_FILE` (and `check --reduce`): a failure, minimized.

Checks the input once (the failure to keep: the first violation the registry does
not explain, else the first one, or the one `--match SIG` names), reduces it
(harness.reduce: an ONNX model as a graph, then the Relax module it imports; a
PyTorch model or a Relax module file, which have no ONNX graph, as the module their
door imports), then has an isolated child check the result once more and write
OUT/repro.py: the reduced module as TVMScript making exactly the failing call, or
the reduced model.onnx when the failure is in the ONNX frontend. TVM runs only in
children (the checks, the import to Relax, every edit of the module): a reduction
that meets a crash survives it.
"""
from __future__ import annotations

import os
import shlex
import sys

from harness import doors
from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.cli.options import output_dir, positive_float
from harness.options import LAYOUTS, PATH_NAMES, Options
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.process.work import Work
from harness.reduce.driver import BEST, RELAX_BEST, STATE, HarnessStopped, Reducer
from harness.reduce.kinds import RelaxModule
from harness.result import Result
from harness.runner import reproducer_spec
from harness.signature import Pattern, Signature
from harness.verdict import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput, Outcome


def choose(result: Result, match: Pattern | None = None) -> Signature | None:
    """The failure a reduction keeps: the one `match` names, else the first violation the
    registry does not explain, else the first violation (unsupported never)."""
    failing = [v for v in result.violations
               if v.kind not in (Outcome.UNSUPPORTED, Outcome.HARNESS_ERROR)]
    if match is not None:
        failing = [v for v in failing if match.matches(Signature.of(v).text())]
    else:
        news = known_issues.judge(result).unknown
        failing = [v for v in failing if v in news] or failing
    return Signature.of(failing[0]) if failing else None


# What a reduction writes into its --out folder (its state first, so the state marks a
# folder an earlier reduction used); --fresh removes these and nothing else.
REDUCTION_FILES = (STATE, BEST, RELAX_BEST + ".py", RELAX_BEST + ".json", "repro.py",
                   "reproducer.json", "model.onnx")


def reduction_dir(path: str, resume: bool, fresh: bool) -> str:
    """--out as a folder this reduction may write into. One an earlier reduction used is
    refused unless --resume (continue it) or --fresh (replace it), as `report` refuses a
    folder with rows: its repro.py is never overwritten silently. Checked before any work."""
    output_dir(path)
    if os.path.exists(os.path.join(path, STATE)) and not (resume or fresh):
        raise BadInput(f"--out {path} holds an earlier reduction ({STATE}): --resume "
                       "continues it, --fresh replaces it, or give another --out")
    return path


def clear_earlier_reduction(path: str) -> None:
    """--fresh: the earlier reduction's files go before the new one writes its own, so no
    repro.py or best input of the old one is left to be taken for the new one's."""
    for name in REDUCTION_FILES:
        if os.path.exists(os.path.join(path, name)):
            os.remove(os.path.join(path, name))


def reduce_case(case_name: str, options: Options, out_dir: str, budget: float,
                timeout: float, resume: bool, command: str,
                match: Pattern | None = None, fresh: bool = False) -> int:
    case = catalog.resolve(case_name)
    reduction_dir(out_dir, resume, fresh)
    if options.inject_pass:   # it is embedded in repro.py: refuse one that cannot be, first
        reproducer_spec.hook_file(options.inject_pass.rsplit(":", 1)[0])
    reducer = Reducer(case.id, options, out_dir, budget, timeout)
    if resume and reducer.resume():
        model = reducer.best()
        state = reducer.state
        where = f"{state.nodes} nodes" if state.best == BEST else \
            f"{state.bindings} Relax bindings" if state.best else "nothing written yet"
        reducer.log(f"resuming {state.case}: {where}, "
                    f"phases done: {', '.join(state.phases_done) or 'none'}")
    else:
        first = run_isolated(case_name, options, timeout=timeout)
        target = choose(first, match)
        if target is None:
            what = f"no violation matches --match {match}" if match and first.violations \
                else f"the check's verdict is {first.verdict}"
            print(f"reduce: {case.id}: nothing to reduce: {what}")
            return EXIT_PASS if first.verdict == Outcome.PASS else first.exit_code
        # An ONNX model is reduced as a graph first; a PyTorch model or a Relax module
        # file (no ONNX graph) at the Relax level only, from the module its door imports.
        model = case.model() if case.onnx_graph else None
        if fresh:
            clear_earlier_reduction(out_dir)
        reducer.start(model, target, door="onnx" if model is not None else "relax")
        reducer.save(model)
    try:
        best = reducer.run(model)
    except HarnessStopped as exc:   # our bug, not the input's: stop, keep the best so far
        reducer.save(None)   # the state (candidates, time); the best is on disk already
        print(f"reduce: stopped: {exc}; the best input so far is kept in {out_dir} "
              "(--resume continues once the harness is fixed)", file=sys.stderr)
        return EXIT_INTERNAL
    return _write(reducer, best, options, out_dir, command)


def sizes_text(reducer: Reducer, best) -> str:
    """'N ONNX nodes -> M nodes -> K Relax bindings (of J imported)', as far as it went."""
    state = reducer.state
    steps = []
    if state.door == "onnx":
        steps += [f"{state.original_nodes} ONNX nodes", f"{state.nodes} nodes"]
    if isinstance(best, RelaxModule):
        if state.door == "onnx":
            steps.append(f"{best.bindings} Relax bindings (of {state.original_bindings} "
                         "imported)")
        else:
            steps += [f"{state.original_bindings} Relax bindings",
                      f"{best.bindings} Relax bindings"]
        if best.constants:
            steps[-1] += f", {best.constants} constants ({best.elements} elements)"
        if state.door != "onnx" and best.bindings >= (state.original_bindings or 0):
            steps.append("not reduced: no edit kept the failure (the reproducer holds the "
                         "whole module)")
    elif state.door != "onnx":
        steps.append("not reduced: " + (state.relax_skipped or "its module was not written "
                                                                "yet (--resume continues)"))
    return (" -> ".join(steps) + f" ({state.candidates} candidates, "
            f"{reducer.elapsed():.0f} s)")


def _write(reducer: Reducer, best, options: Options, out_dir: str, command: str) -> int:
    """The final input, checked once more in a child that also writes repro.py there."""
    sizes = sizes_text(reducer, best)
    best_path = reducer.best_path()
    request = {"out_dir": out_dir, "command": command, "sizes": sizes,
               "signature": reducer.signature.to_json(), "deadline": reducer.timeout}
    result = run_isolated(best_path, options, timeout=reducer.timeout,
                          work=Work.reproducer(request))
    violation = reducer.signature.first_in(result)
    if violation is None:
        print(f"reduce: the reduced model no longer fails as {reducer.signature.text()}; "
              f"kept {best_path}", file=sys.stderr)
        return EXIT_VIOLATED
    if result.reproducer is None and not result.reproducer_error:
        # The check crashed or hung before it could write: a second child only writes.
        result = run_isolated(best_path, options, timeout=reducer.timeout,
                              work=Work.reproducer({**request,
                                                    "violation": violation.to_json()}))
    if result.reproducer is None:
        print(f"reduce: {best_path} fails as {reducer.signature.text()}, but its repro.py "
              f"could not be written: {result.reproducer_error or result.verdict}",
              file=sys.stderr)
        # our own bug writing it is a harness error (exit 4), never "violated"
        return EXIT_INTERNAL if result.verdict == Outcome.HARNESS_ERROR else EXIT_VIOLATED
    print(f"reduce: {reducer.signature.text()}")
    print(f"reduce: {sizes}")
    print(f"reduce: reproducer: {result.reproducer}")
    return EXIT_VIOLATED


def cmd_reduce(args) -> int:
    case = catalog.resolve(args.case)
    options = Options(layout=args.layout or case.layout, target=args.target, path=args.path)
    if options.layout not in LAYOUTS:
        raise BadInput(f"--layout must be one of {', '.join(LAYOUTS)}")
    match = Pattern.parse(args.match) if args.match else None
    name = os.path.basename(case.id)
    for suffix in (".onnx", ".py", ".json"):
        name = name.removesuffix(suffix)
    out_dir = args.out or os.path.join("reductions", name)
    command = shlex.join(["python", "-m", "harness", "reduce", args.case, "--path", args.path,
                          "--layout", options.layout, "--target", options.target]
                         + (["--timeout", f"{args.timeout:g}"]
                            if args.timeout != DEFAULT_TIMEOUT else [])
                         + (["--match", args.match] if args.match else []))
    return reduce_case(args.case, options, out_dir, args.budget, args.timeout, args.resume,
                       command, match, fresh=args.fresh)


def add_reduce_options(parser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="where best.onnx / best.py, the state and repro.py go "
                             "(default reductions/CASE)")
    parser.add_argument("--budget", type=positive_float, default=600.0, metavar="S",
                        help="seconds to spend reducing (default 600); the best so far is kept")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue an interrupted reduction of the same case from OUT")
    again.add_argument("--fresh", action="store_true",
                       help="replace the reduction an earlier run left in OUT (a used OUT "
                            "is refused without --resume or --fresh)")


def register(sub) -> None:
    p = sub.add_parser("reduce", help=f"reduce a failing case or {doors.described()} "
                                      "to a short reproducer")
    p.add_argument("case", metavar="CASE_OR_FILE")
    p.add_argument("--path", choices=PATH_NAMES, default="extract")
    p.add_argument("--layout", choices=sorted(LAYOUTS), default=None)
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT,
                   help="seconds per candidate before it counts as a timeout")
    p.add_argument("--match", metavar="SIG", default=None,
                   help="reduce the violation with this signature (as `check` prints it; "
                        "globs allowed), not the first new one")
    add_reduce_options(p)
    p.set_defaults(func=cmd_reduce)
