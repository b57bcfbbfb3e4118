"""`python -m harness report`: run the catalog and write Markdown and JSON tables."""
from __future__ import annotations


def register(sub) -> None:
    pass
