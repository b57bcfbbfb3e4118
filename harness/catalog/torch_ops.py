"""PyTorch's own operator tests as catalog cases: one case per OpInfo whose first float32
sample torch.export can export, through the PyTorch door (`op-NAME`, family `torch-op`).

PyTorch's OpInfo database (`torch.testing._internal.common_methods_invocations.op_db`,
imported through `expecttest`) holds, per operator, sample inputs its own tests use. A
case is a module calling the operator on the sample: its tensors are the module's inputs,
everything else is fixed as the sample gives it. Importing op_db takes 20 s, so the list
of cases is a file of the catalog (cases/torch_ops.json, written by
`python -m harness.catalog.torch_ops --write` for the `torch` extra's pin), read without
torch; the exported programs are made once per torch version into the harness cache, all
at once, the first time a case is checked (about a minute), and loaded from there.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import warnings

from harness import paths

LISTING = os.path.join(paths.REPO_ROOT, "cases", "torch_ops.json")
FORMAT = 1   # bump when what is exported changes


def listing() -> dict:
    """{"torch": the version listed with, "cases": {id: {"op", "variant"}},
    "refused": {operator: torch.export's refusal}} ({} where the file is absent)."""
    if not os.path.exists(LISTING):
        return {}
    with open(LISTING) as handle:
        return json.load(handle)


def case_id(name: str, variant: str) -> str:
    return "op-" + name.replace(".", "_") + (f"-{variant}" if variant else "")


def cache_folder() -> str:
    version = importlib.metadata.version("torch")
    return os.path.join(paths.cache_dir(), "torch-ops", f"{version}-v{FORMAT}")


def program_path(ref: str) -> str:
    """The saved ExportedProgram of case `ref`, exported (every case at once) on first use."""
    folder = cache_folder()
    paths.made_once(folder, _done(folder), "exporting PyTorch's OpInfo samples (about a "
                    "minute)", lambda: _export_into(folder))
    return os.path.join(folder, f"{ref}.pt2")


def _done(folder: str) -> str:
    return os.path.join(folder, "exported.json")


def _export_into(folder: str) -> dict:
    """Every sample exported into `folder`, `exported.json` written last: what was found."""
    found = export_all(folder)
    paths.write_shared(_done(folder), json.dumps(found, indent=0, sort_keys=True))
    return found


def _op_db() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _call_module(function, arguments: list, kwargs: dict, slots: list[int]):
    """The module of one sample: the operator called on the sample's arguments, its
    tensors the module's inputs (in order), the rest fixed."""
    import torch

    class Call(torch.nn.Module):
        def forward(self, *tensors):
            given = list(arguments)
            for slot, tensor in zip(slots, tensors, strict=True):
                given[slot] = tensor
            result = function(*given, **kwargs)
            # a named tuple (torch.return_types) as a plain one: saved programs cannot
            # serialize torch's named tuple types
            return tuple(result) if isinstance(result, tuple) else result
    return Call()


def _sample_program(op):
    """The exported program of `op`'s first float32 sample, or a refusal (str)."""
    import torch
    if torch.float32 not in op.supported_dtypes("cpu"):
        return "no float32 on the CPU"
    try:
        sample = next(iter(op.sample_inputs("cpu", torch.float32, requires_grad=False)))
    except Exception as exc:  # noqa: BLE001 - PyTorch's own sample generator refusing
        return f"no sample: {type(exc).__name__}: {str(exc).strip()[:160]}"
    arguments = [sample.input, *sample.args]
    if any(isinstance(item, (list, tuple)) and any(isinstance(part, torch.Tensor)
                                                   for part in item) for item in arguments):
        return "a sample argument is a list of tensors (not a module input)"
    slots = [index for index, item in enumerate(arguments) if isinstance(item, torch.Tensor)]
    if not slots:
        return "the sample has no tensor input"
    inputs = tuple(arguments[index] for index in slots)
    module = _call_module(op.op, arguments, dict(sample.kwargs), slots)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            return torch.export.export(module, inputs)
    except Exception as exc:  # noqa: BLE001 - torch.export's refusal: not a case
        return f"torch.export refused it: {type(exc).__name__}: {str(exc).strip()[:160]}"


def export_all(folder: str) -> dict:
    """Every OpInfo's first float32 sample exported into `folder` (CASE.pt2):
    {"cases": {id: {"op", "variant"}}, "refused": {operator: why}}."""
    import torch
    cases, refused = {}, {}
    for op in _op_db():
        identifier = case_id(op.name, op.variant_test_name)
        if identifier in cases:
            continue
        program = _sample_program(op)
        label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if isinstance(program, str):
            refused[label] = program
            continue
        path = os.path.join(folder, f"{identifier}.pt2")
        try:
            torch.export.save(program, path)
        except Exception as exc:  # noqa: BLE001 - torch cannot save or load what it exported
            refused[label] = f"torch.export.save refused it: {type(exc).__name__}: " \
                             f"{str(exc).strip()[:160]}"
            if os.path.exists(path):
                os.remove(path)
            continue
        cases[identifier] = {"op": op.name, "variant": op.variant_test_name}
    return {"torch": torch.__version__.split("+")[0], "cases": cases, "refused": refused}


def main(argv: list[str] | None = None) -> int:
    """`--write`: export every sample now and write the catalog's listing from it."""
    if (argv if argv is not None else sys.argv[1:]) != ["--write"]:
        print("usage: python -m harness.catalog.torch_ops --write", file=sys.stderr)
        return 2
    folder = cache_folder()
    os.makedirs(folder, exist_ok=True)
    found = _export_into(folder)
    with open(LISTING, "w") as handle:
        json.dump(found, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"wrote {LISTING}: {len(found['cases'])} cases, {len(found['refused'])} operators "
          "refused", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
