"""Root conftest: the harness's pytest plugin is loaded through its `pytest11`
entry point (setup.cfg); this file only makes `tests/` importable helpers
(tests/seeded.py) resolvable from any working directory."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tests"))
