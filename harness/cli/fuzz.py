"""Properties over random conv/layout graphs, outside pytest: `python -m harness fuzz`.

For each generated graph (through the ONNX frontend or built directly as Relax):
the path never mutates its source or any stage input, both copies are lossless
and extract the same tasks, and extraction is deterministic. Hypothesis shrinks
a failure; the minimal example is written out as a standalone reproducer.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time

from harness import paths
from harness.catalog import known_issues
from harness.cli.options import output_dir, positive_int
from harness.options import Options
from harness.oracles import roundtrip
from harness.runner import reproducer, reproducer_spec
from harness.runner.path_runner import PathRunner
from harness.tvmapi import calls, ir, loading
from harness.tvmapi.inject import load_copier
from harness.verdict import Outcome, Phase, Result, Violation
from harness.versions import envs

# What ConvertLayout inserts to change layouts: permute_dims for a permutation
# (NCHW -> NHWC), layout_transform for the rest (packed layouts such as NCHW4c).
LAYOUT_CONVERSIONS = ("relax.permute_dims", "relax.layout_transform")


def check_spec(spec, door: str, options: Options, copiers=None, observe=None) -> Result:
    """Both invariants and determinism over one generated graph (a GraphSpec), in-process.

    The same runner as `check`; determinism is the path run twice on fresh
    imports giving the same outcome. `observe(stage, input, output)` sees each stage.
    """
    from harness.catalog import graphs
    from harness.cli.fuzz_graphs import to_relax
    options = dataclasses.replace(options, desired_layouts=spec.desired_layouts())
    build = (lambda: calls.from_onnx(graphs.to_onnx(spec))) if door == "onnx" else \
        (lambda: to_relax(spec))
    runner = PathRunner(options, copier_table=copiers, stop=has_news, observe=observe)
    result = runner.run(build(), Result(case=f"graph[{door}]", options=options.to_json(),
                                        **loading.versions()))
    if not has_news(result):
        again = PathRunner(dataclasses.replace(options, checks=False)).run(
            build(), Result(case=f"graph[{door}]"))
        if again.outcome != result.outcome:
            result.add(Violation(Outcome.ERROR, runner.pipeline.final.name, "(outcome)",
                                 "the path is not deterministic: two runs on fresh imports "
                                 "gave other outcomes", phase=Phase.DETERMINISM))
    return result


def news(result: Result) -> list[Violation]:
    """The violations the known-issue registry does not explain."""
    return known_issues.judge(result).unknown


def has_news(result: Result) -> bool:
    return bool(news(result))


@dataclasses.dataclass
class FuzzRun:
    examples: int
    seconds: float
    failure: Result | None = None
    violation: Violation | None = None   # the first one the registry does not explain
    spec: object = None          # the shrunk GraphSpec
    door: str = ""
    reproducer: str | None = None
    layout_conversions: list[int] = dataclasses.field(default_factory=list)  # per example


def check_and_steer(spec, door: str, options: Options, copiers=None,
                    steer: bool = True) -> tuple[Result, int]:
    """check_spec, and how many layout conversions ConvertLayout inserted; `steer` hands
    that count to hypothesis.target, so generation drifts toward graphs the layout pass
    really rewrites (the seed bug's kind). Inside a hypothesis test only."""
    from hypothesis import target
    inserted: list[int] = []
    result = check_spec(spec, door, options, copiers, layout_conversions_inserted(inserted))
    conversions = inserted[0] if inserted else 0
    if steer:
        target(float(conversions), label="layout conversions inserted")
    return result, conversions


def layout_conversions_inserted(counts: list[int]):
    """An observer for check_spec: appends how many layout conversions ConvertLayout
    inserted (the graphs where the layout pass really rewrites something)."""
    def observe(stage: str, before, after) -> None:
        if stage == "convert-layout":
            counts.append(ir.count_calls(after, LAYOUT_CONVERSIONS)
                          - ir.count_calls(before, LAYOUT_CONVERSIONS))
    return observe


def run(examples: int, seed: int | None = None, options: Options | None = None,
        copier: str | None = None, out_dir: str = "reproducers", progress=None,
        steer: bool = True) -> FuzzRun:
    """Fuzz `examples` graphs. `steer`: hypothesis.target on the number of layout
    conversions ConvertLayout inserted, so generation drifts toward graphs the layout pass
    rewrites (the seed bug's kind); `FuzzRun.layout_conversions` has that number per example."""
    # hypothesis is a test extra: imported here so the CLI starts without it.
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed
    from hypothesis import strategies as st
    from hypothesis.database import DirectoryBasedExampleDatabase

    from harness.catalog import graphs
    from harness.cli.fuzz_graphs import graph_specs, to_relax
    options = options or Options()
    copiers = None
    if copier:
        copiers = dict(roundtrip.COPIERS, json=load_copier(copier))
    outcome = FuzzRun(0, 0.0)
    last: list = []

    # One example database per set of hooks: seeded failures must not replay in real runs.
    hooks = envs.key({"inject": options.inject_pass or "", "copier": copier or ""})
    database = DirectoryBasedExampleDatabase(os.path.join(paths.cache_dir(), "fuzz-db", hooks))

    # No explain phase: it re-runs the shrunk failure many times (about 20 s of a 25 s
    # seeded run) to annotate which draws matter, and the reproducer is the shrunk graph.
    @settings(max_examples=examples, deadline=None, print_blob=True, database=database,
              suppress_health_check=list(HealthCheck),
              phases=[phase for phase in Phase if phase is not Phase.explain])
    @given(spec=graph_specs(), door=st.sampled_from(["onnx", "relax"]))
    def prop(spec, door):
        outcome.examples += 1
        result, conversions = check_and_steer(spec, door, options, copiers, steer)
        outcome.layout_conversions.append(conversions)
        if progress and outcome.examples % 10 == 0:
            progress(f"{outcome.examples} examples, {time.monotonic() - started:.0f} s")
        if has_news(result):
            last[:] = [spec, door, result]
            raise AssertionError(news(result)[0].one_line())

    started = time.monotonic()
    try:
        (with_seed(seed)(prop) if seed is not None else prop)()
    except AssertionError:
        spec, door, result = last   # hypothesis replays the shrunk example last
        outcome.failure, outcome.spec, outcome.door = result, spec, door
        violation = outcome.violation = news(result)[0]
        graph_options = dataclasses.replace(options, desired_layouts=spec.desired_layouts())
        frontend = reproducer_spec.template_of(violation) == "import"
        module = None if frontend else (
            to_relax(spec) if door == "relax" else calls.from_onnx(graphs.to_onnx(spec)))
        folder = os.path.join(out_dir, f"graph-{violation.kind}-{int(time.time())}")
        outcome.reproducer = reproducer.write(
            folder, violation=violation, options=graph_options, versions=loading.versions(),
            command=f"python -m harness fuzz --seed {seed} (shrunk: {spec!r}, door {door})",
            module=module, model=graphs.to_onnx(spec) if frontend else None,
            copier_hook=copier, sizes=f"a generated graph of {len(spec.layers)} layers")
    outcome.seconds = time.monotonic() - started
    return outcome


def cmd_fuzz(args) -> int:
    output_dir(args.out)
    options = Options(target=args.target, inject_pass=args.inject_pass,
                      inject_before=args.inject_before)
    outcome = run(args.examples, args.seed, options, args.inject_copier, args.out,
                  progress=lambda text: print(f"fuzz: {text}", file=sys.stderr, flush=True),
                  steer=not args.no_steer)
    rate = outcome.examples / outcome.seconds if outcome.seconds else 0.0
    rewritten = sum(1 for count in outcome.layout_conversions if count > 0)
    print(f"fuzz: {outcome.examples} examples in {outcome.seconds:.1f} s ({rate:.2f}/s); "
          f"ConvertLayout inserted layout conversions in {rewritten} of them")
    if outcome.failure:
        print(f"fuzz: {outcome.violation.kind}: {outcome.violation.one_line()}")
        print(f"fuzz: shrunk to {outcome.spec!r} via {outcome.door}")
        print(f"fuzz: reproducer: {outcome.reproducer}")
        return 1
    return 0


def register(sub) -> None:
    p = sub.add_parser("fuzz", help="random conv/layout graphs through the path (hypothesis)")
    p.add_argument("--examples", type=positive_int, default=50,
                   help="graphs to generate (default 50)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", default="reproducers", help="folder for reproducers")
    p.add_argument("--target", default="llvm")
    p.add_argument("--inject-pass", metavar="FILE.py:FUNC", default=None)
    p.add_argument("--inject-before", default=None, metavar="STAGE")
    p.add_argument("--no-steer", action="store_true",
                   help="do not steer generation toward graphs ConvertLayout rewrites "
                        "(hypothesis.target on the layout conversions it inserts)")
    p.add_argument("--inject-copier", metavar="FILE.py:EXPR", default=None,
                   help="replace the JSON copier (to prove the round-trip guard bites)")
    p.set_defaults(func=cmd_fuzz)
