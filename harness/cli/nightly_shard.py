"""`python -m harness nightly-shard K/N --out DIR`: one nightly shard's work, as one command.

What a release set's shard job does after its pytest items, in order: the catalog report
on both paths, the pass sweep, the compile for the device-free targets (shard 1 only),
op fuzz campaigns on both paths and, with `--tvm-tests`, TVM's own tests under the
guard; each step is the harness's own command run as a child, carrying last night's rows
from `--carry DIR` and leaving tonight's there for the next night. A step that finds news
(exit 1) does not stop the others; the exit is the worst of them (4 over 1 over 0). Each
finished step is written to OUT/shard-steps.json at once: run it again with `--resume`
and it goes on with the steps left. The workflow's YAML calls this, so a person runs a
shard here as CI does; `--dry-run` prints the commands.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from harness import shards
from harness.paths import REPO_ROOT
from harness.verdict import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput

STEPS = ("report", "report-compile", "passes", "targets", "fuzz", "suite")
DEVICE_FREE_TARGETS = ("cuda", "metal", "opencl", "webgpu", "c")


def commands(shard: str, out: str, carry: str | None, fuzz_seed: int, examples: int,
             tvm_tests: str | None, steps: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """(step, harness argv) for each step of the shard, in order."""
    index = shards.parse(shard).number
    carried = (lambda name: ["--carry", os.path.join(carry, name)]) if carry else \
        (lambda name: [])
    plan = {
        "report": [["report", "--all", "--fresh", "--shard", shard, "--out",
                    os.path.join(out, "report"), *carried("report")]],
        "report-compile": [["report", "--all", "--fresh", "--path", "compile", "--shard",
                            shard, "--out", os.path.join(out, "report-compile"),
                            *carried("report-compile")]],
        "passes": [["passes", "--shard", shard, "--out", os.path.join(out, "passes"), "--fresh",
                    "--store-durations", os.path.join(out, "passes-durations.json"),
                    *carried("passes")]],
        "targets": [["report", "compile", "nn-*", "--fresh", "--path", "compile", "--target",
                     target, "--out", os.path.join(out, f"report-compile-{target}")]
                    for target in DEVICE_FREE_TARGETS] if index == 1 else [],
        "fuzz": [["fuzz", "--generator", "ops", "--examples", str(examples), "--seed",
                  str(fuzz_seed), "--out", os.path.join(out, "fuzz-ops")],
                 ["fuzz", "--generator", "ops", "--path", "compile", "--examples",
                  str(examples), "--seed", str(100 + fuzz_seed), "--out",
                  os.path.join(out, "fuzz-ops-compile")]],
        # TVM's own tests that fail here on their own are listed, not news
        "suite": [["guard-suite", tvm_tests, "--jobs", "2", "--shard", shard, "--out",
                   os.path.join(out, "guard-suite"), "--allow-suite-failures",
                   *carried("guard-suite")]]
        if tvm_tests else [],
    }
    return [(step, argv) for step in steps for argv in plan[step]]


def _done_file(out: str) -> str:
    return os.path.join(out, "shard-steps.json")


def _read_done(out: str) -> dict:
    if not os.path.exists(_done_file(out)):
        return {}
    with open(_done_file(out)) as handle:
        return json.load(handle)


def _mark_done(out: str, done: dict, key: str, code: int, seconds: float) -> None:
    done[key] = {"exit": code, "seconds": round(seconds, 1)}
    with open(_done_file(out) + ".tmp", "w") as handle:
        json.dump(done, handle, indent=1)
    os.replace(_done_file(out) + ".tmp", _done_file(out))


def _keep_for_tomorrow(out: str, carry: str, step: str) -> None:
    """Tonight's rows become the next night's --carry (the folder of the same name)."""
    name = {"report": "report", "report-compile": "report-compile", "passes": "passes",
            "suite": "guard-suite"}.get(step)
    if name and os.path.isdir(os.path.join(out, name)):
        shutil.rmtree(os.path.join(carry, name), ignore_errors=True)
        shutil.copytree(os.path.join(out, name), os.path.join(carry, name))


def cmd_nightly_shard(args) -> int:
    args.shard = str(shards.parse(args.shard, "nightly-shard"))
    # the steps run from the harness's checkout: the folders given are the caller's
    args.out = os.path.abspath(args.out)
    args.carry = os.path.abspath(args.carry) if args.carry else None
    args.tvm_tests = os.path.abspath(args.tvm_tests) if args.tvm_tests else None
    steps = tuple(args.steps.split(",")) if args.steps else \
        tuple(step for step in STEPS if step != "suite" or args.tvm_tests)
    unknown = [step for step in steps if step not in STEPS]
    if unknown:
        raise BadInput(f"--steps: {', '.join(unknown)} is not a step ({', '.join(STEPS)})")
    if "suite" in steps and not args.tvm_tests:
        raise BadInput("the suite step needs --tvm-tests (a checkout's tests/python)")
    planned = commands(args.shard, args.out, args.carry, args.fuzz_seed, args.examples,
                       args.tvm_tests, steps)
    if args.dry_run:
        for step, argv in planned:
            print(f"{step}: python -m harness {' '.join(argv)}")
        return EXIT_PASS
    os.makedirs(args.out, exist_ok=True)
    if not args.resume and os.path.exists(_done_file(args.out)):
        os.remove(_done_file(args.out))   # another night: every step again
    done = _read_done(args.out)
    worst = EXIT_PASS
    for number, (step, argv) in enumerate(planned, 1):
        key = " ".join(argv)
        if key in done:
            print(f"nightly-shard: [{number}/{len(planned)}] {step}: done earlier "
                  f"(exit {done[key]['exit']})", file=sys.stderr)
            code = done[key]["exit"]
        else:
            print(f"nightly-shard: [{number}/{len(planned)}] {step}: python -m harness "
                  f"{key}", file=sys.stderr, flush=True)
            started = time.monotonic()
            # TVM's tests run from their checkout's root, as its CI runs them
            cwd = os.path.dirname(os.path.dirname(args.tvm_tests)) if step == "suite" \
                else REPO_ROOT
            code = subprocess.run([sys.executable, "-m", "harness", *argv],
                                  cwd=cwd).returncode
            if code not in (EXIT_PASS, EXIT_VIOLATED, EXIT_INTERNAL):   # interrupted, killed
                print(f"nightly-shard: {step} stopped (exit {code}); run again with --resume "
                      "to go on", file=sys.stderr)
                return code
            _mark_done(args.out, done, key, code, time.monotonic() - started)
            if args.carry:
                _keep_for_tomorrow(args.out, args.carry, step)
        if code not in (EXIT_PASS, EXIT_VIOLATED):
            worst = EXIT_INTERNAL
        elif code == EXIT_VIOLATED and worst == EXIT_PASS:
            worst = EXIT_VIOLATED
    total = sum(entry["seconds"] for entry in _read_done(args.out).values())
    print(f"nightly-shard {args.shard}: {len(planned)} commands, {total / 60:.1f} min of "
          f"commands in all, exit {worst}", file=sys.stderr)
    return worst


def register(sub) -> None:
    p = sub.add_parser("nightly-shard", help="one nightly shard's work (report on both paths, "
                                             "the pass sweep, fuzz, TVM's tests) as one command")
    p.add_argument("shard", metavar="K/N")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--carry", default=None, metavar="DIR",
                   help="last night's folders (report, report-compile, passes, guard-suite) to "
                        "carry rows from; tonight's are copied there after each step")
    p.add_argument("--fuzz-seed", type=int, default=1)
    p.add_argument("--examples", type=int, default=300, help="op programs per fuzz campaign")
    p.add_argument("--tvm-tests", default=None, metavar="DIR",
                   help="TVM's tests/python at the release's tag: the suite step")
    p.add_argument("--steps", default=None,
                   help=f"comma-separated subset of {','.join(STEPS)} (default: all; suite "
                        "only with --tvm-tests)")
    p.add_argument("--resume", action="store_true",
                   help="skip the steps OUT/shard-steps.json says finished (an interrupted "
                        "run); without it every step runs")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.set_defaults(func=cmd_nightly_shard)
