"""Every catalog case x path x invariant, through the real path in an isolated child."""
from harness.pytest_plugin import assert_invariant


def test_invariant(case_result, invariant):
    result, command = case_result
    assert result.stages, "the child reported no stage at all"
    assert_invariant(result, invariant, command)
    # Un-legalized modules extract nothing: a "pass" with no tasks checked nothing.
    assert result.outcome_count > 0, f"{result.case}: the path produced nothing to compare"
