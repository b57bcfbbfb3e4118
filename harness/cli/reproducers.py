"""`python -m harness reproducers`: regenerate the checked-in reproducers from their specs.

Each generated reproducer under a catalog's reproducers/ keeps its spec beside it
(NAME.json: the violation, the stages, the module's TVMScript); this renders every
one again with today's templates (harness/runner/templates), so a template fix reaches
every reproducer. `--check` changes nothing and exits 1 when one would change (CI).
"""
from __future__ import annotations

import os
import sys

from harness.catalog.cases import case_dirs
from harness.runner import reproducer
from harness.verdict import EXIT_PASS, EXIT_VIOLATED


def cmd_reproducers(args) -> int:
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


def register(sub) -> None:
    p = sub.add_parser("reproducers", help="regenerate the checked-in reproducers from their "
                                           "specs and today's templates")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 when a reproducer differs from what it would be")
    p.set_defaults(func=cmd_reproducers)
