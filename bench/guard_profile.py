"""Where a guarded check's time goes: one check in this process under cProfile.

Prints the stage and pass counts, then the functions with the most time of their own
and the harness's own functions by cumulative time (the guard's callbacks, the copies,
the hashes), so a change to the guard is aimed at what the profile shows.

Usage: python bench/guard_profile.py [CASE] [--path extract|compile] [--no-pass-guard]
       [--top N]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness.options import Options
from harness.process.child import run_spec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", nargs="?", default="yolov3-tiny")
    parser.add_argument("--path", default="extract")
    parser.add_argument("--no-pass-guard", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    options = Options(path=args.path, checks=True, pass_guard=not args.no_pass_guard)
    spec = {"case": args.case, "options": options.to_json()}
    profile = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="harness-profile-") as workdir:
        started = time.perf_counter()
        profile.enable()
        result = run_spec(spec, lambda event: None, workdir)
        profile.disable()
        wall = time.perf_counter() - started
    print(f"{args.case} {args.path}: {wall:.2f} s, verdict {result.verdict}, "
          f"{len(result.passes)} pass applications, stages "
          + ", ".join(f"{stage.name} {stage.seconds:.2f} s" for stage in result.stages))
    for title, key, restrict in (("own time", "tottime", ()),
                                 ("the harness's functions, cumulative", "cumulative",
                                  ("harness/",))):
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text).strip_dirs() if not restrict \
            else pstats.Stats(profile, stream=text)
        stats.sort_stats(key).print_stats(*restrict, args.top)
        body = text.getvalue()
        start = body.find("   ncalls")
        print(f"\n== {title} ==\n" + body[start:].rstrip())
    return 0


if __name__ == "__main__":
    with recorded("guard_profile"):
        code = main()
    sys.exit(code)
