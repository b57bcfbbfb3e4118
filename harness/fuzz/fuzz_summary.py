"""What a fuzz campaign says when it ends: its rate, what it exercised, what it compared."""
from __future__ import annotations


def lines(outcome) -> list[str]:
    """The campaign's closing lines (a FuzzRun): examples and rate, what the generator
    exercised, the numbers compared, and the failure with its reproducer, if any."""
    rate = outcome.checked / outcome.seconds if outcome.seconds else 0.0
    if outcome.generator == "ops":
        counts = outcome.passes_rewrote
        mean = sum(counts) / len(counts) if counts else 0.0
        said = [f"fuzz: {outcome.examples} op programs ({outcome.checked} distinct, checked) "
                f"in {outcome.seconds:.1f} s ({rate:.2f} checked/s); "
                f"{len(outcome.ops_drawn)} distinct ops drawn; {mean:.1f} distinct passes "
                "rewrote each, on average"]
    else:
        rewritten = sum(1 for count in outcome.layout_conversions if count > 0)
        said = [f"fuzz: {outcome.examples} examples ({outcome.checked} distinct, checked) in "
                f"{outcome.seconds:.1f} s ({rate:.2f} checked/s); ConvertLayout inserted "
                f"layout conversions in {rewritten} of them"]
    if outcome.answers:
        said.append("fuzz: numbers compared (distinct inputs): " + "; ".join(
            f"{label} {count}" for label, count in sorted(outcome.answers.items())))
    if outcome.failure:
        said += [f"fuzz: {outcome.violation.kind}: {outcome.violation.one_line()}",
                 f"fuzz: shrunk to {outcome.spec!r} via {outcome.door}",
                 f"fuzz: reproducer: {outcome.reproducer}"]
    return said


def comparison_kind(comparison: str) -> str:
    """A comparison's kind for the campaign's tally (the stages before the compile vary)."""
    if comparison.startswith("the module before"):
        return "the module before its layout stages"
    return comparison.partition(" (the module before")[0]   # the framework, whatever stages
