"""`python -m harness`: list cases, check one, and the catalog-wide commands.

Exit codes follow `git bisect run` (verdict.EXIT_CODES, printed by `--help`).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import textwrap
import threading

from harness import doors, signature
from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.cli.options import positive_float, positive_int
from harness.options import LAYOUTS, OUTCOME_UNITS, PATH_NAMES, Options
from harness.process import batch
from harness.process.commands import reproduce_command
from harness.process.isolate import DEFAULT_TIMEOUT, cancel_all, run_isolated
from harness.result import Result
from harness.tvmapi.pipelines import EXTRACT
from harness.verdict import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    BadInput,
    Outcome,
    Violation,
)


class _Parser(argparse.ArgumentParser):
    """Every usage error is one line on stderr naming the option and where the fix is
    (`... ; see python -m harness check --help`), exit 2 like any other bad input: a
    script or CI log reading the last line of stderr gets the reason, not a usage block."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}   # the subcommands' parsers
        self.command_help: dict[str, str] = {}   # each subcommand's one-line help

    def error(self, message):
        raise BadInput(f"{message}; see {self.prog} --help")

    def parse_args(self, args=None, namespace=None):
        """argparse reports a subcommand's unknown arguments from the top parser (its
        usage, not the subcommand's): named here from the subcommand that got them."""
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            parser = self.commands.get(getattr(parsed, "command", None), self)
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed


def _answer_lines(result: Result) -> list[str]:
    """One line per comparison of numbers (the compile path): how it came out."""
    lines = []
    for record in result.answers:
        if record.status in ("agree", "differ"):
            used = (f"{record.headroom:.1%} of the tolerance" if record.status == "agree"
                    else f"{record.headroom:.3g} x the tolerance")
            how = f"max abs error {record.max_abs_error:.3g}, {used}"
            if record.status == "differ" and record.detail and " elements differ" not in \
                    record.detail:   # a shape or an output count: the numbers do not say it
                how = record.detail
            elif record.status == "differ" and record.detail:
                how = f"{how}: {record.detail.partition(';')[0]}"
            if record.sensitive is False:
                how += "; the answer does not move with the input: this says little"
        else:
            how = record.detail
        lines.append(f"answer vs {record.comparison}: {record.status} ({how})")
    return lines


def format_result(result: Result) -> str:
    path = result.options.get("path", "extract")
    unit = OUTCOME_UNITS.get(path, "signatures")
    lines = [f"{result.case}: {result.verdict} ({result.outcome_count} {unit}, "
             f"{len(result.passes)} pass runs, path {path}) on apache-tvm "
             f"{result.tvm_version} / apache-tvm-ffi {result.tvm_ffi_version}"]
    for stage in result.stages:
        flag = "  <- mutated the source" if stage.mutated_source else ""
        passes = f" {stage.passes:6d} passes" if stage.passes else " " * 13
        lines.append(f"  {stage.name:<34} {stage.seconds:8.2f} s{passes}{flag}")
    for copier in result.copiers:
        if copier.verdict != Outcome.PASS:
            lines.append(f"  copier {copier.name}: {copier.verdict} {copier.detail}")
    lines += [f"  {text}" for text in _answer_lines(result)]
    for violation in result.violations:
        lines.append(f"  {violation.one_line()}")
        lines.append(f"    signature: {signature.text_of(violation)}")
    if result.verdict in (Outcome.CRASH, Outcome.TIMEOUT) and result.stderr_tail:
        lines.append("  stderr tail:")
        lines += ["    " + line for line in result.stderr_tail.splitlines()[-15:]]
    if result.crash_input:
        lines.append(f"  the crashing pass's input module: {result.crash_input}")
    return "\n".join(lines)


def progress_printer(case: str):
    def on_event(event: dict) -> None:
        if event["event"] == "stage-start":
            print(f"[{case}] {event['name']} ...", file=sys.stderr, flush=True)
        elif event["event"] == "pass-end" and event["index"] % 500 == 0:
            print(f"[{case}]   {event['index']} passes ...", file=sys.stderr, flush=True)
        elif event["event"] == "violation":
            violation = Violation.from_json(event)
            print(f"[{case}] ! {violation.kind} at {violation.where()}: "
                  f"{violation.access_path}", file=sys.stderr, flush=True)
    return on_event


def _options(args) -> Options:
    return Options(layout=args.layout or "nchw", target=args.target,
                   inject_pass=args.inject_pass, inject_before=args.inject_before,
                   full_copies=args.full_copies, path=args.path, trials=args.trials,
                   prepack=args.prepack, keep_crash_input=args.keep_crash_input,
                   answers=not args.no_answers)


def cmd_list(args) -> int:
    cases = catalog.select_for_run(args.pattern or None, everything=True)
    if args.json:
        print(json.dumps([case.manifest() for case in cases], indent=1))
        return 0
    for case in cases:
        print(f"{case.id}\t{','.join(case.tags)}" if args.tags else case.id)
    return 0


def cmd_check(args) -> int:
    case = catalog.resolve(args.case)
    options = _options(args)
    if args.layout is None:
        options.layout = case.layout
    if options.layout not in LAYOUTS:
        raise BadInput(f"--layout must be one of {', '.join(LAYOUTS)}")
    out_dir = None
    if args.reduce:   # a used or unwritable --out is refused before the check
        from harness.cli.reduce import reduction_dir
        out_dir = reduction_dir(args.out or os.path.join("reductions", os.path.basename(case.id)),
                                args.resume, args.fresh)
    on_event = None if args.quiet else progress_printer(case.id)
    result = run_isolated(args.case, options, timeout=args.timeout, on_event=on_event)
    judgement = known_issues.judge(result)
    if args.json:
        data = result.to_json()
        for violation, entry in zip(result.violations, data["violations"], strict=False):
            entry["signature"] = signature.text_of(violation)
        print(json.dumps({**data, **judgement.to_json()}, indent=2))
    else:
        print(format_result(result))
        for line in judgement.lines():
            print(f"  {line}")
        if judgement.status == Outcome.NEW:
            for violation in judgement.unknown:
                print(f"  new: {violation.kind} at {violation.where()}: no registry entry "
                      "explains it (exit 1; your own entries: --cases DIR)")
        if result.verdict != Outcome.PASS:
            print(f"  reproduce: {reproduce_command(args.case, options, args.timeout)}")
        if judgement.status == Outcome.KNOWN and not args.ignore_known:
            print("  every violation is a registered known issue: exit 0 "
                  "(--ignore-known counts them)")
    checked = result.exit_code if args.ignore_known else judgement.exit_code
    if args.reduce and result.exit_code == 1:
        from harness.cli import reduce
        reduced = reduce.reduce_case(
            args.case, options, out_dir, args.budget, args.timeout, args.resume,
            reproduce_command(args.case, options, args.timeout), fresh=args.fresh)
        if reduced == EXIT_INTERNAL:   # our bug stopped the reduction: it decides the exit
            return reduced
    return checked


def add_check_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default=None,
                        help="nhwc runs ConvertLayout (the modern AlterOpLayout); "
                             "default: the case's own layout")
    parser.add_argument("--target", default="llvm",
                        help="a target kind (llvm), TVM's JSON form ('{\"kind\": \"llvm\", "
                             "\"mcpu\": \"skylake\"}') or the old string form "
                             "('llvm -mcpu=skylake'); default llvm")
    parser.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT,
                        help="seconds before the child is killed (verdict timeout; "
                             f"default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--inject-pass", metavar="MODULE:FUNC",
                        help="extra stage: a callable IRModule -> IRModule, or a Pass")
    parser.add_argument("--inject-before", default=None, metavar="STAGE",
                        help="the stage the injected pass runs before (default: the path's "
                             f"final stage, e.g. {EXTRACT})")
    parser.add_argument("--path", choices=PATH_NAMES, default="extract",
                        help="extract: up to meta_schedule's task extraction (default); "
                             "tune: static_shape_tuning_pipeline with a small budget; "
                             "compile: tvm.compile to a VM executable")
    parser.add_argument("--trials", type=positive_int, default=4,
                        help="--path tune: total_trials (max 1 per task)")
    parser.add_argument("--prepack", action="store_true",
                        help="--path tune: cpu_weight_prepack (the layout-rewrite passes)")
    parser.add_argument("--keep-crash-input", action="store_true",
                        help="write each pass's input module first, so a crash comes with "
                             "the module the crashing pass received (slower)")
    parser.add_argument("--full-copies", action="store_true",
                        help="also run the whole path on each copy of the source "
                             "(slower; the nightly profile does this)")
    parser.add_argument("--no-answers", action="store_true",
                        help="--path compile: do not run the executable and compare its "
                             "numbers (the copies', the source's, the framework's)")


def _exit_codes_help() -> str:
    """The exit codes, from the one table (verdict.EXIT_CODES), wrapped for a terminal."""
    lines = ["exit codes (made for `git bisect run`):"]
    for code, meaning in EXIT_CODES:
        wrapped = textwrap.wrap(meaning, 70)
        lines += [f"  {code:<5}{wrapped[0]}"] + [f"       {more}" for more in wrapped[1:]]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m harness", description=__doc__.splitlines()[0],
                     epilog=_exit_codes_help(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="one case id a line")
    p.add_argument("pattern", nargs="*", help="glob over ids and tags, e.g. 'yolo*'")
    p.add_argument("--tags", action="store_true", help="also print each case's tags")
    p.add_argument("--json", action="store_true",
                   help="print each case's manifest (id, source, tags, layout, input shapes)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("check", help=f"check one case or {doors.described()} in an "
                                     "isolated child")
    p.add_argument("case", metavar="CASE_OR_FILE")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--ignore-known", action="store_true",
                   help="exit 1 on registered known issues too (what a bisect asks)")
    add_check_options(p)
    p.add_argument("--reduce", action="store_true",
                   help="on a violation, reduce the input to a short reproducer (see `reduce`)")
    from harness.cli.reduce import add_reduce_options
    add_reduce_options(p)
    p.set_defaults(func=cmd_check)

    from harness.cli import commands
    for register in commands.registers():
        register(sub)
    parser.commands = dict(sub.choices)
    parser.command_help = {action.dest: action.help for action in sub._choices_actions}
    for command in sub.choices.values():
        command.add_argument("--cases", dest="user_cases", action="append", metavar="DIR",
                             default=[],
                             help="a folder of your own cases (catalog.toml, known_issues.toml "
                                  "or known_issues/, reproducers/) added to the built-in "
                                  "catalog and registry (repeatable; or "
                                  f"{catalog.USER_CASES}=DIR{os.pathsep}DIR)")
    return parser


def _add_user_cases(folders: list[str]) -> None:
    """--cases DIR: through the environment, so every child sees the same catalog. A
    folder that does not exist, or a registry that does not read, is bad input now,
    before any work (not after a check, when its result is judged)."""
    if folders:
        present = os.environ.get(catalog.USER_CASES, "")
        os.environ[catalog.USER_CASES] = os.pathsep.join(
            [p for p in present.split(os.pathsep) if p] + [os.path.abspath(f) for f in folders])
    if os.environ.get(catalog.USER_CASES):
        catalog.case_dirs()
        known_issues.registry()


def _split_passthrough(argv: list[str]) -> tuple[list[str], list[str]]:
    """`guard-suite PATH -- -k foo`: what follows the first `--` is pytest's."""
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1:]


def one_line(text: str) -> str:
    """A bad-input message as the one line the README promises (a reason quoted from TVM
    or pytest may span lines): a log's last line then holds all of it."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def main(argv=None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, batch.terminate_like_ctrl_c)
    try:
        own, passthrough = _split_passthrough(list(sys.argv[1:] if argv is None else argv))
        args = build_parser().parse_args(own)
        if passthrough and not getattr(args, "takes_pytest_args", False):
            raise BadInput(f"unexpected arguments after '--': {' '.join(passthrough)} "
                           "(only guard-suite passes arguments on, to pytest)")
        if passthrough:
            args.pytest_args = passthrough
        _add_user_cases(args.user_cases)
        return args.func(args)
    except BadInput as exc:
        print(f"harness: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as interrupt:
        code = batch.exit_code_of(interrupt)
        cancel_all()   # no child or warm server outlives the command
        for number in (signal.SIGINT, signal.SIGTERM):   # a second one: now
            signal.signal(number, lambda *_, code=code: os._exit(code))
        print("harness: " + ("interrupted" if code == EXIT_INTERRUPTED else "terminated"),
              file=sys.stderr)
        return code
    except BrokenPipeError:  # `harness list | head`
        sys.stderr.close()
        return 0
    except Exception:  # noqa: BLE001 - a harness bug must not read as "violated" (exit 1)
        import traceback
        traceback.print_exc()
        print("harness: internal error (exit 4): please report it with the traceback above",
              file=sys.stderr)
        return EXIT_INTERNAL
