"""What `fuzz` generates: hypothesis's strategy over harness.catalog.graphs' spec, and a
spec built as Relax.

The catalog holds the spec and the op table as plain data; its choices are drawn here
(a graphs.Chooser over hypothesis's draws), so hypothesis shrinks every one. hypothesis
is a test extra: imported when a strategy is made, so this module (and to_relax)
imports without it.
"""
from __future__ import annotations

from harness.catalog import graphs
from harness.tvmapi import graph_relax


class _Draws:
    """graphs.Chooser over hypothesis's `draw`."""

    def __init__(self, draw, strategies):
        self.draw, self.st = draw, strategies

    def integer(self, low: int, high: int) -> int:
        return self.draw(self.st.integers(low, high))

    def choice(self, options):
        return self.draw(self.st.sampled_from(options))

    def boolean(self) -> bool:
        return self.draw(self.st.booleans())


def graph_specs(max_layers: int = 6):
    """A hypothesis strategy of graphs.GraphSpec, valid by construction."""
    from hypothesis import strategies as st
    return st.composite(lambda draw: graphs.draw_spec(_Draws(draw, st), max_layers))()


def to_relax(spec: graphs.GraphSpec):
    """The spec built directly as Relax (no frontend)."""
    return graphs.emit(spec, graph_relax.RelaxGraph(spec.shape, spec.input_layout),
                       graph_relax.BUILDERS)
