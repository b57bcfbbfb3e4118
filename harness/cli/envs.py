"""`python -m harness envs list|prune`: the cached environments of bisect and matrix."""
from __future__ import annotations

from harness.cli.options import non_negative_int
from harness.versions import envs


def cmd_envs(args) -> int:
    if args.action == "prune":
        removed = envs.prune(args.keep)
        names = f": {' '.join(removed)}" if removed else ""
        print(f"removed {len(removed)} environments{names}")
        return 0
    for info in envs.list_envs():
        pins = " ".join(f"{n}=={v}" for n, v in sorted(info["packages"].items()))
        print(f"{info['key']}  {pins}  (built in {info['built_seconds']} s, {info['built_at']})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("envs", help="list or prune the cached environments")
    p.add_argument("action", choices=["list", "prune"])
    p.add_argument("--keep", type=non_negative_int, default=0, metavar="N",
                   help="with prune: keep the N most recently used environments, remove the "
                        "rest (default: 0, remove them all)")
    p.set_defaults(func=cmd_envs)
