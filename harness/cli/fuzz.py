"""Properties over random conv/layout graphs, outside pytest: `python -m harness fuzz`.

For each generated graph (through the ONNX frontend or built directly as Relax):
the path never mutates its source or any stage input, both copies are lossless
and extract the same tasks, and extraction is deterministic. Hypothesis shrinks
a failure; the minimal example is written out as a standalone reproducer.
`--generator ops` draws Relax programs over the whole operator registry instead
(harness.fuzz.fuzz_ops), through the same checks, steered toward passes that rewrite.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time

from harness import paths
from harness.catalog import known_issues
from harness.cli.options import output_dir, positive_int
from harness.fuzz import fuzz_summary
from harness.options import Options
from harness.oracles import roundtrip
from harness.oracles.answers import References
from harness.result import Result
from harness.runner import reproducer, reproducer_spec
from harness.runner.path_runner import PathRunner
from harness.tvmapi import calls, ir, loading, pass_rewrites
from harness.tvmapi.inject import load_copier
from harness.verdict import EXIT_INTERNAL, Outcome, Phase, Violation
from harness.versions import envs

# What ConvertLayout inserts to change layouts: permute_dims for a permutation
# (NCHW -> NHWC), layout_transform for the rest (packed layouts such as NCHW4c).
LAYOUT_CONVERSIONS = ("relax.permute_dims", "relax.layout_transform")


GENERATORS = ("graphs", "ops")


def build_spec(spec, door: str):
    """The module a generated spec stands for: a GraphSpec through its door, an
    op_programs.OpProgram (door relax) built directly."""
    from harness.catalog import graphs, op_programs
    if isinstance(spec, op_programs.OpProgram):
        from harness.fuzz.fuzz_ops import to_relax as program_to_relax
        return program_to_relax(spec)
    from harness.fuzz.fuzz_graphs import to_relax
    return calls.from_onnx(graphs.to_onnx(spec)) if door == "onnx" else to_relax(spec)


def case_name(spec, door: str) -> str:
    """What the registry's `case` matches a generated input by: `graph-onnx` and
    `graph-relax` for the conv/layout graphs' doors, `ops-relax` for an op program (so an
    entry for one generator's findings never explains the other's). No brackets: a case
    is matched as a glob, where `[relax]` is a character class."""
    from harness.catalog import op_programs
    return f"ops-{door}" if isinstance(spec, op_programs.OpProgram) else f"graph-{door}"


def check_spec(spec, door: str, options: Options, copiers=None, observe=None,
               rewrote: set | None = None) -> Result:
    """Both invariants and determinism over one generated spec (a GraphSpec or an
    OpProgram), in-process.

    The same runner as `check`; determinism is the path run twice on fresh
    imports giving the same outcome. `observe(stage, input, output)` sees each stage;
    `rewrote` collects the passes whose output differed from their input.
    """
    options = dataclasses.replace(options, desired_layouts=spec.desired_layouts())
    build = lambda: build_spec(spec, door)   # noqa: E731
    case = case_name(spec, door)
    runner = PathRunner(options, copier_table=copiers, stop=has_news, observe=observe)
    if rewrote is not None:   # the same guard, also noting each pass that rewrote
        runner.guard = pass_rewrites.RewriteNotingGuard(runner.emit)
    result = runner.run(build(), Result(case=case, options=options.to_json(),
                                        **loading.versions()), _reference(spec, door))
    if rewrote is not None:
        rewrote |= runner.guard.rewrote
    if not has_news(result):
        second_run = PathRunner(dataclasses.replace(options, checks=False)).run(
            build(), Result(case=case))
        if second_run.outcome != result.outcome:
            result.add(Violation(Outcome.ERROR, runner.pipeline.final.name, "(outcome)",
                                 "the path is not deterministic: two runs on fresh imports "
                                 "gave other outcomes", phase=Phase.DETERMINISM))
    return result


def _reference(spec, door: str):
    """The framework's answer for a conv/layout graph through the ONNX door (ONNX Runtime
    on the very graph TVM imported); None for the other generated inputs."""
    from harness.catalog import graphs, op_programs
    if door != "onnx" or isinstance(spec, op_programs.OpProgram):
        return None
    return References(graphs.to_onnx(spec))


def news(result: Result) -> list[Violation]:
    """The violations the known-issue registry does not explain, on any case: a registered
    bug a generated program meets is no news (a `case_only` entry's neither: its message
    cannot tell it apart on a model, but a campaign that stopped at it found nothing)."""
    return [violation for violation in known_issues.judge(result).unknown
            if known_issues.explained_off_its_cases(result, violation) is None]


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
    generator: str = "graphs"
    passes_rewrote: list[int] = dataclasses.field(default_factory=list)  # per example (ops)
    ops_drawn: set = dataclasses.field(default_factory=set)   # every op some example drew
    checked: int = 0   # distinct inputs checked: an example met again is not checked again
    # the numbers oracle over the distinct inputs: {"comparison: status": count}
    answers: dict = dataclasses.field(default_factory=dict)


def check_graph(spec, door: str, options: Options, copiers=None) -> tuple[Result, int]:
    """check_spec on a conv/layout graph, and how many layout conversions ConvertLayout
    inserted into it."""
    inserted: list[int] = []
    result = check_spec(spec, door, options, copiers, layout_conversions_inserted(inserted))
    return result, inserted[0] if inserted else 0


def check_program(program, options: Options, copiers=None) -> tuple[Result, set[str]]:
    """check_spec on an op program, and the passes of the path that rewrote it (output
    structurally unlike input)."""
    rewrote: set[str] = set()
    result = check_spec(program, "relax", options, copiers, rewrote=rewrote)
    return result, rewrote


def steer_toward_conversions(conversions: int) -> None:
    """hypothesis.target on the layout conversions a graph got, so generation drifts
    toward graphs the layout pass really rewrites (the seed bug's kind). Inside a
    hypothesis test only."""
    from hypothesis import target
    target(float(conversions), label="layout conversions inserted")


def steer_toward_new_pairs(ops, rewrote: set[str], seen: set) -> None:
    """hypothesis.target on the (op, pass that rewrote) pairs a program shows for the
    first time in the campaign (`seen`, updated; a program met again shows none), so
    generation drifts toward ops and rewrites not met yet. Steering on the rewrite count
    itself collapsed a campaign onto a few ops (400 examples drew 70 of 183, a third of
    them ones_like), so an op met in no example was never tested. Inside a hypothesis
    test only."""
    from hypothesis import target
    target(float(pairs_not_met(ops, rewrote, seen)),
           label="(op, rewriting pass) pairs not met before")


def pairs_not_met(ops, rewrote: set[str], seen: set) -> int:
    """How many (op, pass that rewrote) pairs, and ops with no rewrite at all, a program
    shows that `seen` (the campaign so far, updated) had not: the op generator's score."""
    pairs = {(op, name) for op in ops for name in rewrote | {""}}
    new = len(pairs - seen)
    seen |= pairs
    return new


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
        steer: bool = True, generator: str = "graphs") -> FuzzRun:
    """Fuzz `examples` graphs (`generator` graphs) or op programs (ops). `steer`:
    hypothesis.target on the number of layout conversions ConvertLayout inserted (graphs),
    so generation drifts toward graphs the layout pass rewrites, or on the (op, rewriting
    pass) pairs an op program shows first (ops), so it drifts toward what is not met yet;
    `FuzzRun.layout_conversions` / `passes_rewrote` has the conversions / the number of
    distinct passes that rewrote, per example."""
    # hypothesis is a test extra: imported here so the CLI starts without it.
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed
    from hypothesis import strategies as st
    from hypothesis.database import DirectoryBasedExampleDatabase

    from harness.fuzz.fuzz_graphs import graph_specs
    options = options or Options()
    copiers = None
    if copier:
        copiers = dict(roundtrip.COPIERS, json=load_copier(copier))
    outcome = FuzzRun(0, 0.0, generator=generator)
    last: list = []
    seen_pairs: set = set()   # the op generator's steering: what the campaign has met
    if generator == "ops":
        from harness.fuzz.fuzz_ops import op_programs_strategy
        specs, doors = op_programs_strategy(), st.just("relax")
    else:
        specs, doors = graph_specs(), st.sampled_from(["onnx", "relax"])

    # One example database per set of hooks: seeded failures must not replay in real runs.
    hooks = envs.key({"inject": options.inject_pass or "", "copier": copier or "",
                      **({"generator": generator} if generator != "graphs" else {})})
    database = DirectoryBasedExampleDatabase(os.path.join(paths.cache_dir(), "fuzz-db", hooks))

    # Each input is checked once a campaign: the shrinker and the target phase draw one
    # spec through many choice sequences (a seeded run's shrink met 125 distinct programs
    # in 171 examples). The path is deterministic (check_spec proves it per input), so a
    # spec met again is answered with its result; steering sees what a fresh check would.
    checked: dict = {}

    # No explain phase: it re-runs the shrunk failure many times (most of a seeded run) to
    # annotate which draws matter, and the reproducer is the shrunk graph.
    @settings(max_examples=examples, deadline=None, print_blob=True, database=database,
              suppress_health_check=list(HealthCheck),
              phases=[phase for phase in Phase if phase is not Phase.explain])
    @given(spec=specs, door=doors)
    def prop(spec, door):
        outcome.examples += 1
        key = (repr(spec), door)
        if key not in checked:
            checked[key] = (check_program(spec, options, copiers) if generator == "ops"
                            else check_graph(spec, door, options, copiers))
            outcome.checked = len(checked)
            for record in checked[key][0].answers:
                label = f"{fuzz_summary.comparison_kind(record.comparison)}: {record.status}"
                outcome.answers[label] = outcome.answers.get(label, 0) + 1
        result, found = checked[key]   # the passes that rewrote (ops), the conversions
        if generator == "ops":
            if steer:
                steer_toward_new_pairs(spec.ops(), found, seen_pairs)
            outcome.passes_rewrote.append(len(found))
            outcome.ops_drawn.update(spec.ops())
        else:
            if steer:
                steer_toward_conversions(found)
            outcome.layout_conversions.append(found)
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
        frontend = reproducer_spec.template_of(violation) == "import" and generator == "graphs"
        module = None if frontend else build_spec(spec, door)
        kind = "program" if generator == "ops" else "graph"
        folder = os.path.join(out_dir, f"{kind}-{violation.kind}-{int(time.time())}")
        flag = f" --generator {generator}" if generator != "graphs" else ""
        sizes = (f"a generated program of {len(spec.applications)} op applications"
                 if generator == "ops" else f"a generated graph of {len(spec.layers)} layers")
        outcome.reproducer = reproducer.write(
            folder, violation=violation, options=graph_options, versions=loading.versions(),
            command=f"python -m harness fuzz{flag} --seed {seed} (shrunk: {spec!r}, "
                    f"door {door})",
            module=module, model=_onnx_model(spec) if frontend or (
                door == "onnx" and generator == "graphs") else None,
            copier_hook=copier, sizes=sizes)
    outcome.seconds = time.monotonic() - started
    if generator == "ops" and outcome.examples >= NOTHING_DRAWN_AFTER and not outcome.ops_drawn:
        raise NothingDrawn(outcome.examples)
    return outcome


NOTHING_DRAWN_AFTER = 10   # programs: a campaign that applied no op by then tested nothing


class NothingDrawn(Exception):
    """An op campaign whose programs hold no application: TVM accepted none of the ops'
    applications the generator drew, so nothing was tested, and a clean run would say the
    opposite. Our bug (the generator reading this release's types wrong, as it once read
    0.25's), not TVM's: exit 4."""

    def __init__(self, examples: int):
        super().__init__(
            f"the op generator applied no op in {examples} programs: it cannot drive this "
            "TVM, so nothing was tested (`python -c \"from harness.fuzz.fuzz_ops import "
            "undriven; print(undriven())\"` says why each op is refused)")


def _onnx_model(spec):
    from harness.catalog import graphs
    return graphs.to_onnx(spec)


def cmd_fuzz(args) -> int:
    output_dir(args.out)
    loading.torch_not_needed()   # generated ONNX graphs and Relax programs only
    options = Options(target=args.target, inject_pass=args.inject_pass,
                      inject_before=args.inject_before, path=args.path)
    try:
        outcome = run(args.examples, args.seed, options, args.inject_copier, args.out,
                      progress=lambda text: print(f"fuzz: {text}", file=sys.stderr,
                                                  flush=True),
                      steer=not args.no_steer, generator=args.generator)
    except NothingDrawn as exc:
        print(f"fuzz: harness error (exit {EXIT_INTERNAL}): {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    print("\n".join(fuzz_summary.lines(outcome)))
    return 1 if outcome.failure else 0


def register(sub) -> None:
    p = sub.add_parser("fuzz", help="random conv/layout graphs through the path (hypothesis)")
    p.add_argument("--examples", type=positive_int, default=50,
                   help="graphs to generate (default 50)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", default="reproducers", help="folder for reproducers")
    p.add_argument("--target", default="llvm")
    p.add_argument("--path", choices=("extract", "compile"), default="extract",
                   help="the path each input runs (see `check --help`): compile lowers what "
                        "extraction leaves alone (scans and sorts, the VM's shape code)")
    p.add_argument("--inject-pass", metavar="FILE.py:FUNC", default=None)
    p.add_argument("--inject-before", default=None, metavar="STAGE")
    p.add_argument("--generator", choices=GENERATORS, default="graphs",
                   help="graphs: conv/layout graphs (default); ops: Relax programs over "
                        "the whole operator registry")
    p.add_argument("--no-steer", action="store_true",
                   help="do not steer generation toward graphs ConvertLayout rewrites "
                        "(hypothesis.target on the layout conversions it inserts), or op "
                        "programs toward ops and rewriting passes not met yet")
    p.add_argument("--inject-copier", metavar="FILE.py:EXPR", default=None,
                   help="replace the JSON copier (to prove the round-trip guard bites)")
    p.set_defaults(func=cmd_fuzz)
