"""Invariant 2 across releases: what one release saved, the next loads as the same module.

MetaSchedule keeps workloads as JSON (a tuning log's workload table), and users keep
modules with save_json: an upgrade must not lose them. Release A saved a case's module
and a tuning log of its tasks; release B (the loading one) judges what it gets back
against its own import of the same case. Strongest first:

- B cannot load the module A saved (load_json raises; a signal is a crash, which the
  process boundary reports): access path `(load_json)`;
- B's extract path fails on the loaded module, or extracts other tasks from it than from
  its own import: `(extract path)`, `tasks`;
- B cannot open A's tuning log, or the log lacks the workloads of B's own tasks (their
  tuning records would never be found): `(tuning log)`;
- the module loads but is not structurally equal to B's own import (or an attrs field
  differs): the access path of the difference. The weaker signal: B's frontend may
  import the same model differently (the tasks then say whether it matters).

Each is a lossy-roundtrip at stage `cross-release`, phase copy, copier `json@A` (the
saving release's TVM version, which the result also carries as options["saved_by"]: a
registry entry scopes the pair with `tvm` and `saved_by`).
"""
from __future__ import annotations

from harness.oracles import fieldwise, outcomes
from harness.tvmapi import structure
from harness.verdict import Outcome, Phase, Violation

STAGE = "cross-release"
LOAD = "(load_json)"
PATH = "(extract path)"
TUNING_LOG = "(tuning log)"


def copier_of(saved_by: dict) -> str:
    """`json@0.26.0`: the copy is A's save_json read by B's load_json."""
    return f"json@{saved_by.get('tvm_version')}"


def _release(saved_by: dict) -> str:
    return (f"apache-tvm {saved_by.get('tvm_version')} / apache-tvm-ffi "
            f"{saved_by.get('tvm_ffi_version')}")


def _lossy(access_path: str, detail: str, saved_by: dict) -> Violation:
    return Violation(Outcome.LOSSY_ROUNDTRIP, STAGE, access_path, detail, phase=Phase.COPY,
                     copier=copier_of(saved_by))


def save_failed(detail: str, saved_by: dict) -> Violation:
    """Release A could not write what it saves (its own column shows the same copy fail)."""
    return _lossy("(save_json)", f"{_release(saved_by)} could not save the module: {detail}",
                  saved_by)


def load_failed(detail: str, saved_by: dict) -> Violation:
    return _lossy(LOAD, f"cannot load a module saved by {_release(saved_by)}: {detail}",
                  saved_by)


def structural_difference(own, loaded, saved_by: dict) -> Violation | None:
    """None when the loaded module is this release's own import, structure and attrs."""
    path = structure.first_mismatch(own, loaded, map_free_vars=True)
    detail = "is not structurally equal to"
    if path is None:
        found = fieldwise.compare_module_attrs(own, loaded)
        if found is None:
            return None
        path, field = found
        detail = f"differs in an attrs field ({field}) from"
    return _lossy(path, f"the module saved by {_release(saved_by)} loads but {detail} this "
                  "release's own import of the case (weaker: this release's frontend may "
                  "import it differently)", saved_by)


def path_failed(detail: str, saved_by: dict) -> Violation:
    return _lossy(PATH, f"the extract path failed on the module saved by "
                  f"{_release(saved_by)}: {detail}", saved_by)


def tasks_difference(own: list, loaded: list, saved_by: dict) -> Violation | None:
    """The tasks of the loaded module against those of this release's own import."""
    return outcomes.difference(own, loaded, f"module saved by {_release(saved_by)}", STAGE,
                               copier_of(saved_by))


def tuning_log_unreadable(detail: str, saved_by: dict) -> Violation:
    return _lossy(TUNING_LOG, f"cannot open the tuning log written by {_release(saved_by)}: "
                  f"{detail}", saved_by)


def tuning_log_missing(missing: list[str], total: int, saved_by: dict) -> Violation | None:
    """Tasks of this release whose workload A's tuning log lacks: their records are lost."""
    if not missing:
        return None
    return _lossy(TUNING_LOG, f"{len(missing)} of {total} tasks' workloads are not in the "
                  f"tuning log written by {_release(saved_by)} (first {missing[0]}): their "
                  "tuning records would not be found", saved_by)
