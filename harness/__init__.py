"""Reproducer and regression harness for TVM's tuning-task extraction invariants.

1. extraction (and every pass on the way to it) never mutates the source IRModule;
2. a deepcopy / JSON round trip preserves every attrs field, structural equality
   and the extracted tasks.
"""
__version__ = "0.1.0"
