import os
import sys

from harness.verdict import EXIT_INTERRUPTED, EXIT_TERMINATED

try:
    from harness.cli.main import main
except KeyboardInterrupt:   # Ctrl-C while the harness starts: nothing begun, nothing lost
    os._exit(EXIT_INTERRUPTED)

code = main()
if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
    # Interrupted: what was finished is already on disk (journals are written row by row),
    # and the children are killed. Out now, without the interpreter's shutdown, which joins
    # every pool thread: one still waiting on a child or a lock kept a Ctrl-C'd `report`
    # alive for minutes (seen once in three, 2026-12-07).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
