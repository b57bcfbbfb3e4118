"""`python -m harness reproducers`: regenerate the checked-in reproducers, or run them.

Each generated reproducer under a catalog's reproducers/ keeps its spec beside it
(NAME.json: the violation, the stages, the module's TVMScript); this renders every
one again with today's templates (harness/runner/templates), so a template fix reaches
every reproducer. `--check` changes nothing and exits 1 when one would change (CI).

`--run [ENTRY_ID...]` answers a TVM developer's question instead: on this TVM build,
which registered bugs still reproduce? It runs each entry's reproducer (every entry
that has one, or those named) with the installed TVM, or with `--source CHECKOUT
[--build-dir DIR]` against a source build (the checkout's python/ and DIR/lib, with the
checkout's own tvm-ffi: bisect-step's environment, harness/versions/source_build.py),
and sets each answer beside what the registry expects there. A release is expected to
reproduce an entry when the entry's version ranges cover it; a source build when its
ranges allow any source build and, where the entry names them, the commit holds its
`introduced_by` and not its `fixed_by` (asked of the checkout's git). A row that
differs is marked, with what it means for the registry: a bug that no longer reproduces
there was fixed there (the entry goes stale on a release that has the fix); one that
reproduces outside its range widens it. Exit 0 when every answer is the expected one,
1 otherwise; a torch reproducer where torch is not installed is skipped, saying so.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import time

from harness.catalog import known_issues
from harness.catalog.cases import case_dirs
from harness.catalog.issue_entry import KnownIssue
from harness.cli.options import positive_float
from harness.cli.upstream import commit_of, find
from harness.runner import reproducer
from harness.tvmapi import loading  # versions() reads package metadata: no TVM import
from harness.verdict import EXIT_PASS, EXIT_VIOLATED, BadInput

DEFAULT_TIMEOUT = 600.0   # seconds a reproducer may take (the slowest here takes about 10)
# A build folder holds TVM when lib/ holds one of these (libtvm_ffi.so alone is tvm-ffi's).
LIBRARIES = ("libtvm.so", "libtvm_compiler.so", "libtvm_runtime.so")
# Run with the build's python and environment: its versions, and whether torch is there
# (the harness's own loader asserts the build is the one asked for, as bisect-step's does).
_PROBE = ("import importlib.util, json\n"
          "from harness.tvmapi import loading\n"
          "loading.tvm()\n"
          "print(json.dumps({**loading.versions(),\n"
          "                  'torch': importlib.util.find_spec('torch') is not None}))\n")


def cmd_reproducers(args) -> int:
    if args.run:
        return run_reproducers(args)
    for flag, given in (("ENTRY_ID", args.entries), ("--source", args.source),
                        ("--build-dir", args.build_dir), ("--timeout", args.timeout),
                        ("--json", args.json)):
        if given:
            raise BadInput(f"{flag} is for --run (running the reproducers)")
    changed = []
    for folder in case_dirs():
        folder = os.path.join(folder, "reproducers")
        if os.path.isdir(folder):
            changed += reproducer.regenerate(folder, check=args.check)
    verb = "would change" if args.check else "rewritten"
    for path in changed:
        print(f"{verb}: {path}")
    print(f"reproducers: {len(changed)} {verb}", file=sys.stderr)
    return EXIT_VIOLATED if args.check and changed else EXIT_PASS


# ---- which TVM the reproducers run against ----------------------------------

@dataclasses.dataclass
class Stack:
    """A TVM to run reproducers with: its python, environment, versions and checkout."""
    label: str
    python: str
    env: dict | None
    versions: dict
    has_torch: bool
    source: str | None = None   # a source build's checkout (its git answers ancestry)
    commit: str | None = None


def installed_stack() -> Stack:
    versions = loading.versions()
    return Stack(f"apache-tvm {versions['tvm_version']} / apache-tvm-ffi "
                 f"{versions['tvm_ffi_version']} (installed)", sys.executable, None, versions,
                 importlib.util.find_spec("torch") is not None)


def source_stack(source: str, build_dir: str | None) -> Stack:
    """The build of a checkout, as bisect-step checks one: refused (exit 2) when the folder
    is not a TVM checkout, has no build, or the build does not import as itself."""
    from harness.versions import envs, source_build, source_checkout  # bisect-step's: only here
    source = os.path.abspath(source)
    if not os.path.isdir(os.path.join(source, "python", "tvm")):
        raise BadInput(f"--source {source}: not a TVM checkout (no python/tvm)")
    build_dir = os.path.abspath(build_dir or os.path.join(source, "build"))
    lib = os.path.join(build_dir, "lib")
    if not os.path.isdir(lib) or not set(os.listdir(lib)) & set(LIBRARIES):
        raise BadInput(f"--build-dir {build_dir}: no TVM build there (no lib/libtvm.so, "
                       "libtvm_compiler.so or libtvm_runtime.so); "
                       f"build it first: python -m harness bisect-step --source {source} "
                       f"--build-dir {build_dir} --build-only")
    python = sys.executable
    try:   # the checkout's git or tvm-ffi failing: a --source the user must fix
        commit = source_checkout.git(source, "rev-parse", "HEAD")
        subject = source_checkout.git(source, "log", "-1", "--format=%s")
        if os.path.isdir(os.path.join(source, source_checkout.FFI_DIR)):
            python = envs.python_of(source_build.ffi_environment(
                os.path.join(source, source_checkout.FFI_DIR)))
    except source_checkout.EnvironmentProblem as exc:
        raise BadInput(f"--source {source}: {exc}") from None
    env = source_build.checkout_env(source, build_dir, commit)
    proc = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise BadInput(f"the build in {build_dir} does not import as {source}'s TVM: {reason}")
    probed = json.loads(proc.stdout.strip().splitlines()[-1])
    return Stack(f"source build {source} @ {commit[:10]} {subject!r} (build {build_dir}, "
                 f"apache-tvm-ffi {probed['tvm_ffi_version']})", python, env,
                 {"tvm_version": probed["tvm_version"],
                  "tvm_ffi_version": probed["tvm_ffi_version"]},
                 probed["torch"], source, commit)


# ---- what the registry expects there -------------------------------------------

def expectation(entry: KnownIssue, stack: Stack) -> tuple[bool, str]:
    """(whether the entry's bug should reproduce on `stack`, why)."""
    ranges = " and ".join(f"{name} {spec}" for name, spec in (("apache-tvm", entry.tvm),
                                                              ("apache-tvm-ffi", entry.tvm_ffi))
                          if spec) or "any version"
    if stack.commit is None:
        outside = [f"{name} {stack.versions[key]} outside {getattr(entry, field)}"
                   for name, key, field, other in (
                       ("apache-tvm", "tvm_version", "tvm", "tvm_ffi"),
                       ("apache-tvm-ffi", "tvm_ffi_version", "tvm_ffi", "tvm"))
                   if not dataclasses.replace(entry, **{other: ""}).on_stack(stack.versions)]
        return (False, "; ".join(outside)) if outside else (True, f"inside {ranges}")
    if not entry.on_stack(stack.versions, source_builds=True):
        return False, f"tvm-ffi {stack.versions['tvm_ffi_version']} outside {ranges}"
    for field, present in (("fixed_by", False), ("introduced_by", True)):
        commit = commit_of(entry, field)
        if commit is None:
            continue
        ancestor = _is_ancestor(stack.source, commit[0], stack.commit)
        if ancestor is None:
            return True, f"{field} {commit[0][:10]} is not in this checkout's history"
        if ancestor != present:
            return False, (f"fixed by {commit[0][:10]}, which this commit holds" if not present
                           else f"introduced by {commit[0][:10]}, which this commit lacks")
    return True, f"a source build (inside {ranges})"


def _is_ancestor(source: str, ancestor: str, commit: str) -> bool | None:
    """Whether `ancestor` is in `commit`'s history; None when git does not know it."""
    proc = subprocess.run(["git", "-C", source, "merge-base", "--is-ancestor", ancestor, commit],
                          capture_output=True, text=True)
    return {0: True, 1: False}.get(proc.returncode)


# ---- running them ------------------------------------------------------------------

@dataclasses.dataclass
class Answer:
    """One reproducer's run: its exit code (None: skipped or timed out), time, last line."""
    code: int | None
    seconds: float
    said: str


def run_one(path: str, stack: Stack, timeout: float) -> Answer:
    with open(path) as handle:
        needs_torch = "import torch" in handle.read()
    if needs_torch and not stack.has_torch:
        return Answer(None, 0.0, f"skipped: needs torch, which {stack.python} does not have")
    started = time.monotonic()
    try:
        proc = subprocess.run([stack.python, path], cwd=os.path.dirname(path), env=stack.env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Answer(None, time.monotonic() - started, f"timed out after {timeout:g} s")
    lines = (proc.stdout.strip().splitlines() or proc.stderr.strip().splitlines() or [""])
    return Answer(proc.returncode, time.monotonic() - started, lines[-1])


def selected(entry_ids: list[str]) -> list[KnownIssue]:
    """The entries named (each must exist and have a reproducer), or every one that has."""
    if not entry_ids:
        return [entry for entry in known_issues.registry() if entry.reproducer]
    entries = [find(entry_id) for entry_id in entry_ids]
    bare = [entry.id for entry in entries if not entry.reproducer]
    if bare:
        raise BadInput(f"no reproducer registered for {', '.join(bare)}")
    return entries


def verdict(answer: Answer, expected: bool) -> tuple[str, str]:
    """(agrees | differs | skipped, what the row says)."""
    if answer.code is None and answer.said.startswith("skipped"):
        return "skipped", answer.said
    got = {0: False, 1: True}.get(answer.code)
    if got is None:
        return "differs", f"DIFFERS: no answer ({answer.said})"
    if got == expected:
        return "agrees", "as expected"
    if expected:
        return "differs", ("DIFFERS: fixed here? it does not reproduce: the entry goes stale "
                           "on a release with this fix (record fixed_by, narrow its range)")
    return "differs", "DIFFERS: reproduces outside the registered range (widen it)"


def _answers(entries: list[KnownIssue], stack: Stack, timeout: float,
             jobs: int) -> dict[str, Answer]:
    """Each reproducer's answer, `jobs` scripts at once (each its own process), said as
    each ends."""
    import concurrent.futures
    scripts = list(dict.fromkeys(os.path.join(entry.base, entry.reproducer)
                                 for entry in entries))
    answers: dict[str, Answer] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running = {pool.submit(run_one, path, stack, timeout): path for path in scripts}
        for future in concurrent.futures.as_completed(running):
            path = running[future]
            answers[path] = future.result()
            print(f"[{len(answers)}/{len(scripts)}] {os.path.basename(path)}: exit "
                  f"{answers[path].code} ({answers[path].seconds:.1f} s)", file=sys.stderr,
                  flush=True)
    return answers


def run_reproducers(args) -> int:
    if args.build_dir and not args.source:
        raise BadInput("--build-dir goes with --source (the checkout it was built from)")
    if args.check:
        raise BadInput("--check regenerates nothing with --run: give one of them")
    entries = selected(args.entries)
    stack = source_stack(args.source, args.build_dir) if args.source else installed_stack()
    print(f"reproducers on {stack.label}", file=sys.stderr)
    answers = _answers(entries, stack, args.timeout or DEFAULT_TIMEOUT, args.jobs)
    rows = []
    for entry in entries:
        path = os.path.join(entry.base, entry.reproducer)
        answer = answers[path]
        expected, why = expectation(entry, stack)
        status, note = verdict(answer, expected)
        rows.append(Row(entry.id, os.path.basename(path),
                        "-" if answer.code is None else str(answer.code),
                        f"{answer.seconds:.1f}",
                        f"{'reproduces' if expected else 'does not'} ({why})", note, status,
                        answer.said, path))
    _print_table(rows, stack)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"stack": stack.label, "rows": [dataclasses.asdict(row) for row in rows]},
                      handle, indent=1)
    count = {status: sum(row.status == status for row in rows)
             for status in ("agrees", "differs", "skipped")}
    print(f"reproducers: {count['agrees']} as the registry expects, {count['differs']} differ, "
          f"{count['skipped']} skipped ({stack.label})", file=sys.stderr)
    return EXIT_VIOLATED if count["differs"] else EXIT_PASS


@dataclasses.dataclass
class Row:
    entry: str
    reproducer: str
    exit: str
    seconds: str
    expects: str
    note: str
    status: str
    said: str
    path: str = ""     # the reproducer's file (what a commit bisect runs)


def _print_table(rows: list[Row], stack: Stack) -> None:
    header = Row("entry", "reproducer", "exit", "s", "registry expects", "", "", "")
    columns = ("entry", "reproducer", "exit", "seconds", "expects")
    widths = {name: max(len(getattr(row, name)) for row in [header, *rows]) for name in columns}
    print(f"on {stack.label}  (exit 1: reproduces, 0: does not, 2: cannot run here)")
    for row in [header, *rows]:
        cells = [getattr(row, name).rjust(widths[name]) if name == "seconds"
                 else getattr(row, name).ljust(widths[name]) for name in columns]
        print("  ".join(cells + [row.note]).rstrip())
        if row.status == "differs" and row.said:
            print(" " * (widths["entry"] + 2) + f"it said: {row.said}")


def register(sub) -> None:
    p = sub.add_parser("reproducers", help="regenerate the checked-in reproducers from their "
                                           "specs and today's templates; or --run them against "
                                           "this TVM or a source build")
    p.add_argument("entries", nargs="*", metavar="ENTRY_ID",
                   help="with --run: only these entries' reproducers (default: every entry "
                        "that has one)")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 when a reproducer differs from what it would be")
    p.add_argument("--run", action="store_true",
                   help="run the reproducers and compare each answer with the registry's "
                        "expectation (exit 1 when one differs)")
    p.add_argument("--source", metavar="TVM_CHECKOUT",
                   help="with --run: against this checkout's build (its python/, BUILD/lib and "
                        "its own tvm-ffi) instead of the installed TVM")
    p.add_argument("--build-dir", metavar="DIR",
                   help="with --source: the build folder (default TVM_CHECKOUT/build)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="with --run: reproducers at once, each its own process (default 1)")
    p.add_argument("--timeout", type=positive_float, default=None,
                   help=f"with --run: seconds a reproducer may take (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--json", metavar="FILE", default=None,
                   help="with --run: also write every row (entry, exit, status, file) to FILE")
    p.set_defaults(func=cmd_reproducers)
