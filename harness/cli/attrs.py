"""`python -m harness attrs`: round-trip every registered attrs type, one row per type.

The sweep runs in a child process: on a TVM stack whose save_json segfaults the
parent still prints a `crash` line (and exits 1) instead of dying with it.
"""
from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import subprocess
import sys

from harness.cli.options import positive_int
from harness.process.death import describe_death
from harness.tvmapi import loading
from harness.verdict import EXIT_CANNOT_TEST, EXIT_PASS, EXIT_VIOLATED, BadInput, Outcome


def _print_row(row) -> None:
    fields = ",".join(row.fields)
    line = (f"{row.type_key:<44} {len(row.fields):>3} fields {row.examples:>5} examples  "
            f"{row.verdict}")
    if row.verdict != Outcome.PASS:
        line += f"  {row.detail}"
    print(line if row.verdict != Outcome.PASS else line + f"  [{fields}]", flush=True)


def cmd_attrs(args) -> int:
    loading.torch_not_needed()   # attrs objects built from their schemas only
    if not args.in_process:
        argv = [sys.executable, "-m", "harness", "attrs", "--in-process",
                "--examples", str(args.examples)] + (["--json"] if args.json else [])
        argv += ["--seed", str(args.seed)] if args.seed is not None else []
        argv += ["--type", args.type] if args.type else []
        proc = subprocess.run(argv, stdout=None, stderr=subprocess.PIPE, text=True)
        if proc.returncode < 0:
            death = describe_death(proc.returncode, proc.stderr, "during the attrs sweep")
            print(f"crash: {death}", file=sys.stderr)
            return EXIT_VIOLATED
        sys.stderr.write(proc.stderr)
        return proc.returncode
    try:
        from harness.oracles import attrs_sweep as attrs_check
        from harness.tvmapi import reflection
    except ImportError as exc:   # hypothesis is a test extra
        raise BadInput(f"the attrs sweep needs hypothesis ({exc}); pip install -e '.[test]'") \
            from None
    try:
        loading.tvm()
    except loading.TVMUnavailable as exc:
        print(f"harness: cannot test: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TEST
    if args.type and not any(fnmatch.fnmatchcase(key, args.type)
                             for key in reflection.registered_attrs_types()):
        raise BadInput(f"--type {args.type!r} matches no registered attrs type "
                       "(e.g. 'relax.attrs.Conv2D*'; `python -m harness attrs` lists them all)")
    rows = attrs_check.check_all(args.examples, args.seed, args.type,
                                 on_row=None if args.json else _print_row)
    counts = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    if args.json:
        print(json.dumps({"types": len(rows), "counts": counts,
                          "rows": [dataclasses.asdict(r) for r in rows]}, indent=1))
    else:
        tally = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        print(f"{len(rows)} attrs types: {tally}")
    return EXIT_VIOLATED if any(Outcome.of(verdict).failing for verdict in counts) else EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser("attrs", help="round-trip every registered attrs type (hypothesis)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--examples", type=positive_int, default=20,
                   help="examples per type (default 20)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized)")
    p.add_argument("--type", default=None, metavar="GLOB", help="only type keys matching")
    p.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_attrs)
