"""The torch-op family: PyTorch's own operator tests (the OpInfo database) as catalog
cases through the PyTorch door, listed from cases/torch_ops.json without importing torch.
"""
from __future__ import annotations

import json
import os

import pytest

from harness.catalog import cases as catalog
from harness.catalog import torch_ops


def test_the_listing_makes_one_nightly_case_per_exported_sample_through_the_torch_door():
    listed = torch_ops.listing()
    family = catalog.select(tags=["torch-op"])
    assert len(family) == len(listed["cases"]) > 500
    assert all(case.door.name == "torch" and case.opt_in and case.needs_torch
               for case in family)
    assert {case.id for case in family} == set(listed["cases"])
    # the refusals are torch's, said: none is silently dropped
    assert listed["refused"] and all(reason for reason in listed["refused"].values())


@pytest.mark.nightly   # imports op_db (20 s) and exports every sample (a minute)
def test_the_listing_is_what_the_installed_torch_exports(tmp_path):
    """cases/torch_ops.json is what `python -m harness.catalog.torch_ops --write` writes on
    the torch extra's pin: a new torch or a changed export rule shows here."""
    found = torch_ops.export_all(str(tmp_path))
    listed = torch_ops.listing()
    if found["torch"] != listed["torch"]:
        pytest.skip(f"the listing is of torch {listed['torch']}, this is {found['torch']}")
    assert json.loads(json.dumps(found["cases"])) == listed["cases"]
    assert all(os.path.exists(tmp_path / f"{case_id}.pt2") for case_id in found["cases"])
