"""`python -m harness passes`: every registered pass on catalog modules.

By default every relax pass and the TIR passes `tvm.compile` runs (see
harness.tvmapi.passes); `--pass GLOB` picks any registered one by name.

Each (pass, case, point) is one check on the `pass` path: the extract path up to the
point (imported, legalized, fused), or `tvm.compile` up to the pass (compiled), then the
pass alone. Through the one runner: the pass's input is not mutated (per-pass guard, hash,
its JSON text at the end), its output round-trips with every copier, and a second run on
the same input and a run on a deepcopy of the input give the same module. Each check runs
isolated (a crash is a row, not the end); what its row says is cli.sweep_rows'.

A pass already checked on an identical input (another case, layout or point) is not
checked again: its row is answered from memory and says where it was checked
(cli.sweep_memo, cli.sweep_schedule); cli.sweep_run runs the checks and keeps their rows;
`--shard` takes (model, pass group) units, so a
model's layouts meet in one shard and a heavy model is spread (cli.sweep_units).
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys

from harness.catalog import cases as catalog
from harness.cli.options import (
    add_carry_options,
    add_journal_options,
    add_shard_options,
    positive_float,
    positive_int,
)
from harness.cli.sweep_run import SweepRun
from harness.process.isolate import DEFAULT_TIMEOUT
from harness.tvmapi import loading
from harness.tvmapi import passes as registry
from harness.tvmapi.inject import load_module
from harness.verdict import (
    EXIT_CANNOT_TEST,
    EXIT_PASS,
    EXIT_VIOLATED,
    BadInput,
)


def select(globs: list[str] | None, target: str = "llvm") -> list[registry.RegisteredPass]:
    """The passes `--pass GLOB...` names, or the default selection."""
    if not globs:
        return registry.default_selection(target)
    selected = [p for p in registry.registered()
                if any(fnmatch.fnmatch(p.name, glob) for glob in globs)]
    if not selected:
        raise BadInput(f"no registered pass matches {globs} (relax passes by short name, "
                       "e.g. 'Fold*'; TIR passes by TVM's name, e.g. 'tirx.*', 's_tir.Lower*')")
    return selected


def listing(selected, target: str = "llvm") -> list[dict]:
    on_pipeline = registry.pipeline_pass_names(target)
    return [{"pass": p.name, "family": "tir" if p.tir else "relax",
             "points": list(p.points_on(on_pipeline)),
             "on_compile_pipeline": p.on(on_pipeline), "skipped": p.skipped}
            for p in selected]


def _compile_pipeline(globs: list[str] | None, target: str) -> frozenset[str]:
    """The passes tvm.compile runs (their `compiled` point). The default selection has
    recorded them already; passes named by --pass run at the other points when that
    compile fails (--pass GLOB is the way out of it)."""
    try:
        return registry.pipeline_pass_names(target)
    except registry.PipelineUnknown:
        if not globs:
            raise
        return frozenset()


def cmd_passes(args) -> int:
    try:
        return _sweep(args)
    except registry.PipelineUnknown as exc:   # TVM failing: a violation, not our bug
        print(f"passes: {exc}", file=sys.stderr)
        return EXIT_VIOLATED
    except loading.TVMUnavailable as exc:      # the parent lists passes: it needs TVM
        print(f"passes: cannot test here: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TEST


def _sweep(args) -> int:
    cases = [] if args.list else catalog.select_for_run(args.cases)
    if not any(case.needs_torch for case in cases):   # the parent imports TVM to list passes
        loading.torch_not_needed()
    loading.tvm()   # the harness's import, before a --register file's own `import tvm`
    if args.register:
        load_module(args.register, flag="--register")   # passes registered under test names
    selected = select(args.pass_, args.target)
    if args.list:
        entries = listing(selected, args.target)
        if args.json:
            print(json.dumps({"passes": entries}, indent=1))
        else:
            for entry in entries:
                print(f"{entry['pass']:45} {entry['family']:5} {','.join(entry['points']):34} "
                      f"{entry['skipped'] or 'runs'}")
        return EXIT_PASS
    if (args.resume or args.fresh or args.carry) and not args.out:
        raise BadInput("--resume, --fresh and --carry are about the rows journal of --out DIR: "
                       "give --out")
    return SweepRun(args, cases, selected, _compile_pipeline(args.pass_, args.target)).run()


def register(sub) -> None:
    p = sub.add_parser("passes", help="sweep every registered pass over catalog modules")
    p.add_argument("cases", nargs="*", help="case ids or globs (default: the default catalog)")
    p.add_argument("--pass", dest="pass_", action="append", metavar="GLOB",
                   help="only passes whose name matches (repeatable), e.g. 'Fold*', "
                        "'tirx.*' (default: every relax pass and the TIR passes compile runs)")
    p.add_argument("--point", action="append", choices=registry.POINTS,
                   help="where each pass runs: a point of the extract path (TIR passes "
                        "from legalized on), or compiled, the input tvm.compile hands the "
                        "passes it runs (default: every point of each pass)")
    p.add_argument("--register", metavar="FILE.py",
                   help="import this file first (in the parent and every child): it may "
                        "register more passes (relax.transform or TIR)")
    p.add_argument("--list", action="store_true",
                   help="list the selected passes (family, points, why skipped) and stop")
    p.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    p.add_argument("--out", default=None,
                   help="also write passes.md (with the pass x case x point matrix), "
                        "passes.json and the rows journal here")
    add_journal_options(p, "passes-rows.jsonl", "this TVM, target and --register file")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1)
    add_carry_options(p, "passes-rows.jsonl",
                      "the TVM stack, target, --register file and the catalog")
    p.add_argument("--no-memo", action="store_true",
                   help="check every (pass, case, point), even a pass on an input it was "
                        "already checked on (by default that row is remembered)")
    add_shard_options(p, "(model, pass group) units of checks")
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_passes)
