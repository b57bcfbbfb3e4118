"""`upstream ENTRY --fix PATCH --source TVM_CHECKOUT`: does a patch fix a registered bug?

The patch is tried (`try --patch`) on the checkout's base: it fixes the entry when the
entry's reproducer reproduces on the base's build and not on the head's, checked again,
and nothing else the change can affect is new. Then the patch is kept with the entry
(`fixes/ID.patch` beside the registry, `fix` and `fix_verified` in its entry) and
`upstream ENTRY` carries it. Exit 0 verified; 1 it does not fix it, or it breaks
something (both said); 2, 4, 125 as every command.
"""
from __future__ import annotations

import os
import shutil
import sys
import time

from harness.catalog import registry_edit
from harness.catalog.issue_entry import KnownIssue
from harness.cli import try_change
from harness.verdict import EXIT_CANNOT_TEST, EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput

FIXES_FOLDER = "fixes"


def verify(entry: KnownIssue, args, make_bench=try_change.bench_of) -> int:
    if not args.source:
        raise BadInput("--fix needs --source TVM_CHECKOUT: the patch is tried on a build of it")
    if not entry.reproducer:
        raise BadInput(f"[{entry.id}] has no reproducer: nothing can show a patch fixes it")
    trial_args = try_change.options(source=args.source, base=args.base, patch=args.fix,
                                    build_dir=args.build_dir, store=args.store,
                                    jobs=args.jobs, state=args.state)
    answer = try_change.run_try(trial_args, make_bench)
    if answer is None:
        return EXIT_CANNOT_TEST
    change, selection, outcome, _ = answer
    if outcome is None:
        raise BadInput(f"--fix {args.fix} touches nothing a check runs (docs, tests): it "
                       f"cannot fix {entry.id}")
    fixed = [finding for finding in outcome.fixes if finding.entry == entry.id]
    said = f"{os.path.basename(args.fix)} on {change.base[:10]}"
    if outcome.errors:
        for error in outcome.errors:
            print(f"upstream: harness error: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    if not fixed:
        print(f"upstream: {said} does not fix {entry.id}: its reproducer "
              f"{_reproducer_state(outcome, entry.id)}")
        return EXIT_VIOLATED
    if outcome.new:
        print(f"upstream: {said} fixes {entry.id} but breaks {len(outcome.new)} other "
              "check(s):")
        for finding in outcome.new:
            print(f"  new: {finding.row}: {finding.signature}")
        return EXIT_VIOLATED
    kept = os.path.join(FIXES_FOLDER, f"{entry.id}.patch")
    target = os.path.join(entry.base, kept)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.abspath(args.fix) != os.path.abspath(target):
        shutil.copyfile(args.fix, target)
    with open(target) as handle:
        lines = sum(1 for line in handle if line[:1] in "+-"
                    and not line.startswith(("+++", "---")))
    how = fixed[0].note or "the reproducer stops reproducing"
    verified = (f"`try --patch` on apache/tvm @ {change.base[:10]} (source build, "
                f"{time.strftime('%Y-%m-%d')}): {how} ({fixed[0].state}); nothing new in the "
                f"{selection.size()} checks the change selects; {lines} lines changed")
    # each new field goes right after the entry's id: written in reverse, read in order
    registry_edit.set_field(entry.base, entry.id, "fix_verified", verified)
    registry_edit.set_field(entry.base, entry.id, "fix", kept)
    print(f"upstream: {said} fixes {entry.id}; kept as {target} and recorded in its entry")
    return EXIT_PASS


def _reproducer_state(outcome, entry_id: str) -> str:
    row = f"reproducer {entry_id}"
    if row in outcome.stayed:
        return "reproduces on the base and on the head"
    return "did not reproduce on the base, or did not run (see `reproducers --run`)"
