"""Test data, not tests: suites that tests run in a pytest of their own (a subprocess
started in their folder, where their own pytest.ini makes them the rootdir), never
collected by the harness's run (`testpaths = tests` would reach them)."""
collect_ignore_glob = ["*"]
