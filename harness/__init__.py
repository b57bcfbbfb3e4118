"""Reproducer and regression harness for TVM's tuning-task extraction invariants.

1. extraction (and every pass on the way to it) never mutates the source IRModule;
2. a deepcopy / JSON round trip preserves every attrs field, structural equality
   and the extracted tasks.
"""
import os

__version__ = "0.1.0"
# The checkout the harness runs from: cases/ and the cache live here, and a child
# process (another python, a source-build environment) imports the harness from it.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
