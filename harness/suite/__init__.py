"""Any pytest suite as a corpus: every pass its tests run, guarded (TVM's own tests first).

session_guard  the guard over a session (one PassGuard in every PassContext, copies
               of each distinct pass input and output after each test);
plugin         `pytest --harness-guard`: records per test, the merged summary, exit status;
not_passed     why a test did not pass: pytest's reasons, normalized, in categories, counted
               (a test flaky, or an outcome the guard changed);
summary        merging records and reading them against the registry (path "suite"); an
               outcome the guard changed is a harness error;
file_run       one test file in its own pytest: its row, and the record of a file that
               hung, died or whose conftest did not import; what failed under the guard
               run again without it (a test that then passes, once more under it), a
               file killed under the guard run whole under it once more, then without it.
`python -m harness guard-suite` (cli/guard_suite.py) runs a suite file by file under it.
"""
