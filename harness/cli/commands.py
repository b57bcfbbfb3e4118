"""The command table: the modules of the commands beyond `check` and `list`, each of which
adds its own subparser (imported when the parser is built, so a command's imports cost
nothing to the others)."""
from __future__ import annotations


def registers() -> list:
    """Each command module's `register`, in the order `--help` lists them (check and list
    are main's own)."""
    from harness.cli import attrs as attrs_cli
    from harness.cli import (
        bisect,
        bisect_step,
        envs,
        fuzz,
        guard_suite,
        matrix,
        merge,
        nightly_shard,
        passes,
        reach,
        reduce,
        report,
        reproducers,
        try_change,
        upstream,
        watch,
    )
    return [report.register, attrs_cli.register, fuzz.register, bisect.register,
            bisect_step.register, matrix.register, envs.register, reduce.register,
            passes.register, reproducers.register, upstream.register, guard_suite.register,
            merge.register, nightly_shard.register, watch.register, reach.register,
            try_change.register]
