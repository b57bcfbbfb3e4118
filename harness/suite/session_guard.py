"""The guard over a whole test session: every pass any test runs, recorded per test.

One PassGuard (the instrument `check` runs pass by pass) sits in every PassContext
of the session (context_hook). For each test:
  * a pass that changes its own input while it runs is `mutated` at that pass. Only
    the pass's own run is watched, so a test editing its module between two passes
    (its right) is never blamed on a pass; and only an input someone besides the pass
    holds (PassGuard `shared_only`): holding a reference to a unique input would make a
    copy-on-write pass copy it, which a test counting references would see;
  * each distinct module a pass receives or returns (distinct by structural hash,
    across the whole session) is copied by every copier and compared
    (oracles.roundtrip), in the instrument's callback so that no reference outlives
    it (a copy this TVM build made losslessly of the same module before, in any
    process, is remembered on disk and not made again: oracles.roundtrip_memo): a
    lossy copy is `lossy-roundtrip` at the pass whose input or output it was;
    TVMScript refusing to print or parse one is `unsupported` for that copier, as in
    `check`. A module whose JSON text is over the size cap, or past the per-test or
    per-session count of copies, is counted, not copied (the per-pass guard still sees it).
Nothing is raised into the test. What the guard's work raises is decided by the one
classifier (classify.Call): our own code's exception is recorded as `harness-error`, TVM
failing in one of the guard's calls is the violation it is (an `error`, phase checks),
never the other way round; either turns the guard off for the rest of the test.
"""
from __future__ import annotations

import dataclasses
import gc
import time

from harness import classify
from harness.oracles import roundtrip, roundtrip_memo
from harness.tvmapi import calls, context_hook, copiers, errors, ir, structure
from harness.tvmapi.pass_guard import PassGuard
from harness.verdict import Outcome, Phase, Violation

STAGE = "suite"   # the stage of every suite record: passes run by tests, not a path
DEFAULT_MAX_BYTES = 8_000_000   # a module's JSON text above this is counted, not copied
MAX_MODULES_PER_TEST = 200      # distinct modules copied per test (the rest counted)
# Distinct modules copied per session (a guard-suite file): bounds a file's guard cost
# deterministically (test order, not a clock): of v0.26.0's test files only the two
# largest generators of modules copy more (docs/explanation/benchmarks.md); the rest are
# counted.
DEFAULT_MAX_MODULES = 3000


def _tvm_failed(call: classify.Call, kind: str, access_path: str, what: str,
                pass_name: str, **where) -> Violation:
    """TVM failing in one of the guard's own calls: the violation it is."""
    return Violation(kind, STAGE, access_path, f"{what}: {call.detail}",
                     pass_name=pass_name, **where)


def _refused(name: str, reason: str, what: str) -> Violation:
    """A copier that cannot carry the pass's module at all (TVMScript refusing its own
    text): `unsupported` for that copier, the same words whether made now or remembered."""
    return Violation(Outcome.UNSUPPORTED, STAGE, f"({name})", f"{reason} (the pass's {what})",
                     phase=Phase.COPY, copier=name)


@dataclasses.dataclass
class TestRecord:
    """What the guard saw in one test."""
    test: str
    passes: int = 0                 # pass applications, nested ones included
    pass_names: list[str] = dataclasses.field(default_factory=list)   # distinct, run order
    modules_copied: int = 0
    modules_remembered: int = 0     # copied already, by an earlier test of this session
    copies_remembered: int = 0      # copies this TVM build made losslessly before, in any
    #                                 process (roundtrip_memo, on disk): not made again
    over_cap: int = 0               # not copied: over the size, per-test or session cap
    not_well_formed: int = 0        # pass inputs and outputs outside the invariants
    held_after: int = 0             # callbacks after which the guard still held a module
    guard_seconds: float = 0.0      # the instrument's time, its copies included
    violations: list[Violation] = dataclasses.field(default_factory=list)


class SessionGuard:
    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, copier_table=None,
                 memo: bool = False, max_modules: int = DEFAULT_MAX_MODULES):
        self.max_bytes = max_bytes
        self.max_modules = max_modules
        self.modules_copied = 0   # this session's, every test's
        self.memo = memo   # the plugin's default; off in process, where a test seeds faults
        self.copiers = dict(copier_table or roundtrip.COPIERS)
        self.guard = PassGuard(emit=lambda event: None, shared_only=True)
        self.remembered: set[int] = set()   # structural hashes copied this session
        self.record: TestRecord | None = None
        self.active = False
        self.busy = False   # copying: a pass a copier runs is not the test's
        self.broken: Violation | None = None
        self.seconds = 0.0
        self.hook = None

    # ---- installed for the session ---------------------------------------

    def install(self) -> None:
        self.hook = context_hook.install(self._instrument())

    def uninstall(self) -> None:
        if self.hook is not None:
            self.hook.uninstall()
            self.hook = None

    def _instrument(self):
        return calls.pass_instrument(
            "HarnessSuiteGuard", lambda mod, info: self._safely(self._before, mod, info),
            lambda mod, info: self._safely(self._after, mod, info))

    def _safely(self, step, mod, info) -> None:
        if not self.active or self.busy:
            return
        started = time.perf_counter()
        self.busy = True
        try:
            done = classify.Call.of(STAGE, self._released_after, step, mod, info)
            if not done.ok:
                self._off(Violation(Outcome.ERROR, STAGE, "(guard)", "TVM failed in the suite "
                                    f"guard's own calls: {done.detail}",
                                    pass_name=str(info.name), phase=Phase.CHECKS))
        except classify.HarnessBug as bug:   # never into the test: recorded, guard off
            self._off(Violation(Outcome.HARNESS_ERROR, STAGE, "(guard)",
                                f"the suite guard failed: {bug}", pass_name=str(info.name),
                                phase=Phase.CHECKS))
        finally:
            self.busy = False
            self.seconds += time.perf_counter() - started

    def _off(self, violation: Violation) -> None:
        self.active, self.broken = False, violation

    def _released_after(self, step, mod, info) -> None:
        references = structure.use_count(mod)
        step(mod, info)
        self._release(mod, references)

    def _release(self, mod, references: int) -> None:
        """Leave `mod` with the references it came with: a reference the guard's work left
        behind (a cycle holding a wrapper of it) would make a copy-on-write pass copy what
        it could change in place. So collect, young generations first; what still holds
        it is counted in the test's record (`held_after`). A safety net: 0 on TVM's suites;
        the one such leak found, the TVMScript parser keeping the stack it was called
        from, is avoided where it happens (copiers.parse_tvmscript)."""
        for generation in (1, 2):
            if structure.use_count(mod) <= references:
                return
            gc.collect(generation)
        if structure.use_count(mod) > references:
            self.record.held_after += 1

    def _before(self, mod, info) -> None:
        well_formed = self._well_formed(mod)
        self.guard.run_before_pass(mod, info, watch=well_formed)
        if well_formed:
            self._copy_checked(mod, "input", str(info.name))

    def _after(self, mod, info) -> None:
        self.guard.run_after_pass(mod, info)
        if self._well_formed(mod):
            self._copy_checked(mod, "output", str(info.name))

    def _well_formed(self, mod) -> bool:
        """Both invariants are about well-formed IR. A test may hand a pass a module built
        by hand and not normalized yet (its expressions without types) or ill-formed on
        purpose: Relax's normalizer fills the missing types in place, by design, and a copy
        of such a module cannot be compared (TVMScript refuses it, a JSON copy turns a
        missing type into a node visitors reject). Such a module is counted, not guarded."""
        if not calls.is_module(mod):
            return False
        if ir.well_formed(mod):
            return True
        self.record.not_well_formed += 1
        return False

    # ---- one test ----------------------------------------------------------

    def begin_test(self, test: str) -> None:
        self.guard.begin_stage(STAGE, [])
        self.record = TestRecord(test)
        self.broken, self.seconds, self.active = None, 0.0, True

    def end_test(self) -> TestRecord:
        """Stop watching: the test's record."""
        self.active = False
        end = self.guard.end_stage()
        record = self.record
        record.passes = len(end.passes)
        for pass_record in end.passes:
            if pass_record.name not in record.pass_names:
                record.pass_names.append(pass_record.name)
        for finding in end.findings:
            if finding.what == "its input":
                record.violations.append(Violation(
                    Outcome.MUTATED, STAGE, "(its input)",
                    f"pass {finding.record.name} changed its input: {finding.how}",
                    pass_name=finding.record.name, pass_index=finding.record.index))
        if self.broken:
            record.violations.append(self.broken)
        record.guard_seconds = round(self.seconds, 4)
        self.guard.findings, self.record = [], None
        return record

    def _copy_checked(self, module, what: str, pass_name: str) -> None:
        """Copy `module` and compare, unless this session copied its like already."""
        record = self.record
        if not calls.is_module(module):
            return
        hashed = classify.Call.of(STAGE, structure.structural_hash, module)
        if not hashed.ok:
            unhashable = errors.is_unhashable(hashed.error)   # the oracle's limit: said
            record.violations.append(_tvm_failed(
                hashed, Outcome.UNSUPPORTED if unhashable else Outcome.ERROR,
                "(structural hash)", f"the pass's {what} cannot be hashed", pass_name,
                phase=Phase.COPY if unhashable else Phase.CHECKS))
            return
        key = hashed.value
        if key in self.remembered:
            record.modules_remembered += 1
            return
        self.remembered.add(key)
        if record.modules_copied >= MAX_MODULES_PER_TEST or \
                self.modules_copied >= self.max_modules:
            record.over_cap += 1
            return
        self._copy_one(module, what, pass_name, record)

    def _copy_one(self, module, what: str, pass_name: str, record: TestRecord) -> None:
        saved = classify.Call.of(STAGE, copiers.save_json, module)
        if not saved.ok:
            record.violations.append(_tvm_failed(
                saved, "lossy-roundtrip", "(json)", f"save_json of the pass's {what} failed",
                pass_name, phase=Phase.COPY, copier="json"))
            return
        text = saved.value
        if len(text) > self.max_bytes:
            record.over_cap += 1
            return
        record.modules_copied += 1
        self.modules_copied += 1
        memo_key = roundtrip_memo.module_key(text, module) if self.memo else None
        for name, copier in self.copiers.items():
            # A copy this build made of this very module before (another test file, last
            # night's run) is not made again: the copiers are deterministic, and only a
            # lossless verdict or a refusal is kept. An injected copier is never remembered.
            key = memo_key if copier is roundtrip.COPIERS.get(name) else None
            known = roundtrip_memo.remembered(name, key) if key else None
            if known is not None:
                record.copies_remembered += 1
                violation = None if known.lossless else _refused(name, known.refusal, what)
            else:
                violation = self._copy_with(name, copier, module, text, what, key)
            if violation is not None:
                violation.pass_name = pass_name
                record.violations.append(violation)

    def _copy_with(self, name, copier, module, text, what, memo_key) -> Violation | None:
        """The copy's violation, or None. A lossless copy, or the copier's refusal to carry
        the module at all, is remembered under `memo_key` (None: not remembered)."""
        try:
            violation = self._compared_copy(name, copier, module, text, what)
        except roundtrip.Unsupported as exc:
            if memo_key:
                roundtrip_memo.remember(name, memo_key, unsupported=str(exc))
            return _refused(name, str(exc), what)
        if violation is None and memo_key:
            roundtrip_memo.remember(name, memo_key)
        return violation

    def _compared_copy(self, name, copier, module, text, what) -> Violation | None:
        """The copy's violation, or None; raises roundtrip.Unsupported when the copier
        cannot carry the module at all."""
        copy, failure = roundtrip.copy_with(name, roundtrip.from_text(copier, text), module,
                                            STAGE, what)
        if failure is not None:
            return failure
        compared = classify.Call.of(STAGE, roundtrip.compare, module, copy, name, STAGE, text,
                                    what)
        if compared.ok:
            return compared.value
        return Violation(Outcome.ERROR, STAGE, f"({name})", f"comparing the {name} copy of the "
                         f"pass's {what} failed: {compared.detail}", phase=Phase.CHECKS,
                         copier=name)
