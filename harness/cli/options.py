"""Option values checked where they are parsed: a bad one is exit 2 naming the option and
the fix, before any work, never an internal error after it.

argparse types (`positive_int`, ...) refuse at parse time; `output_dir` is called
by each command before it starts, so an --out it cannot write to is refused
before the first check rather than after the last.
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile


def _number(kind, minimum, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < minimum:   # NaN and inf too
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what}")
        return value
    parse.__name__ = kind.__name__   # argparse names the type in its messages
    return parse


positive_int = _number(int, 1, "1 or more")
non_negative_int = _number(int, 0, "0 or more")
positive_float = _number(float, 1e-9, "more than 0")


def add_journal_options(parser, journal: str, keyed_by: str) -> None:
    """--resume / --fresh: what to do with the rows an earlier run left in --out."""
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help=f"keep the rows already in OUT/{journal} for {keyed_by}; run the "
                            "rest (only the current selection is reported)")
    again.add_argument("--fresh", action="store_true",
                       help="replace the rows an earlier run left in OUT")


def add_carry_options(parser, journal: str, same: str) -> None:
    """--carry DIR / --carry-refresh N: rows of an earlier night made from the same inputs
    (harness.cli.carry)."""
    parser.add_argument("--carry", action="append", metavar="DIR",
                        help=f"take a row from DIR/{journal} (an earlier night) instead of "
                             f"checking again when {same}, the harness and every installed "
                             "package are the same (read again against today's registry); "
                             "repeatable; never for a source build")
    parser.add_argument("--carry-refresh", type=non_negative_int, default=7, metavar="N",
                        help="with --carry: still check each row for real one night in N, "
                             "the same night of the cycle for one row (default 7; 0: never)")


def add_decision_options(parser, unit: str, default: str) -> None:
    """--match / --any: when a bisect step (a release, a commit) counts as bad."""
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument("--match", metavar="SIG", default=None,
                        help=f"the {unit} is bad when it shows a violation with this signature "
                             "(as `check` prints it; globs allowed, e.g. 'crash:*'); default: "
                             f"bad when it shows {default}")
    decide.add_argument("--any", action="store_true",
                        help=f"the {unit} is bad on any violation, registered ones included")


def output_dir(path: str, flag: str = "--out") -> str:
    """`path` as a folder this run can write into (created if missing), or BadInput."""
    from harness.verdict import BadInput
    if os.path.exists(path) and not os.path.isdir(path):
        raise BadInput(f"{flag} {path} is a file, not a folder: give a folder to write into")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".harness-write-test-"):
            pass
    except OSError as exc:
        raise BadInput(f"{flag} {path} cannot be written ({exc.strerror or exc}): "
                       "give a folder you can write to") from None
    return path


def add_shard_options(parser, unit: str) -> None:
    """--shard K/N and --durations FILE: this runner's part of the selection."""
    parser.add_argument("--shard", default=None, metavar="K/N",
                        help=f"run only the K-th of N shards of the {unit} (1-based; or "
                             "TVM_NUM_SHARDS / TVM_SHARD_INDEX, 0-based), balanced by --durations")
    parser.add_argument("--durations", default=None, metavar="FILE",
                        help="JSON {key: seconds} to balance shards by (every shard must read "
                             "the same file)")
    parser.add_argument("--store-durations", default=None, metavar="FILE",
                        help="merge this run's times into FILE at the end (the nightly keeps "
                             "the file --durations reads)")
