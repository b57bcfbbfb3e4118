"""`python -m harness matrix`: cases x version sets in one table, from cached environments."""
from __future__ import annotations

import sys

from harness.catalog import cases as catalog
from harness.versions import envs
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.tvmapi.pipelines import Options
from harness.verdict import BadInput


def parse_set(text: str) -> dict[str, str]:
    return envs.parse_requirements([p for p in text.replace(",", " ").split() if p])


def cmd_matrix(args) -> int:
    sets = [parse_set(s) for s in args.set]
    if not sets:
        raise BadInput("give at least one --set 'apache-tvm==V,apache-tvm-ffi==V'")
    cases = catalog.select(args.pattern)
    if not cases:
        raise BadInput(f"no case matches {' '.join(args.pattern)}")
    labels = [" ".join(f"{n.removeprefix('apache-')}=={v}" for n, v in sorted(s.items()))
              for s in sets]
    table = {}
    for label, packages in zip(labels, sets):
        path = envs.ensure(packages, log=lambda t: print(t, file=sys.stderr, flush=True))
        envs.touch(path)
        for case in cases:
            result = run_isolated(case.id, Options(layout=case.layout), timeout=args.timeout,
                                  python=envs.python_of(path))
            table[case.id, label] = result.verdict
            print(f"[{label}] {case.id}: {result.verdict}", file=sys.stderr, flush=True)
    print("| case | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for case in cases:
        print(f"| {case.id} | " + " | ".join(table[case.id, label] for label in labels) + " |")
    return 0


def cmd_envs(args) -> int:
    if args.action == "prune":
        removed = envs.prune(args.keep)
        print(f"removed {len(removed)} environments" + (f": {' '.join(removed)}" if removed else ""))
        return 0
    for info in envs.list_envs():
        pins = " ".join(f"{n}=={v}" for n, v in sorted(info["packages"].items()))
        print(f"{info['key']}  {pins}  (built in {info['built_seconds']} s, {info['built_at']})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("matrix", help="cases x version sets, one table")
    p.add_argument("pattern", nargs="+", help="case ids or globs")
    p.add_argument("--set", action="append", default=[], metavar="PKG==V,PKG==V",
                   help="one column: a version set (repeatable)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_matrix)
    p = sub.add_parser("envs", help="list or prune the cached environments")
    p.add_argument("action", choices=["list", "prune"])
    p.add_argument("--keep", type=int, default=0, help="with prune: keep the N most recently used")
    p.set_defaults(func=cmd_envs)
