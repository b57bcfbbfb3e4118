"""Verdicts, violations and the exit codes `git bisect run` understands.

A run's verdict is the most severe thing it saw. Who is to blame decides the
kind: a TVM exception is a violation of TVM's (`error`, or `lossy-roundtrip` on
a copy), a signal is a `crash`, and an exception from the harness's own code is
`harness-error` (exit 4), so that a bisect stops rather than blame a release.
What one check found, in these words, is harness.result's.
"""
from __future__ import annotations

import dataclasses
import enum

EXIT_PASS = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 4   # the harness itself failed: a bisect must stop, not blame a release
EXIT_CANNOT_TEST = 125  # git bisect run: skip this revision
EXIT_INTERRUPTED = 130  # Ctrl-C: what was finished is kept (rows journals, state files)
EXIT_TERMINATED = 143   # SIGTERM (a CI job cancelled, `kill`): kept and stopped the same way

# What each exit code tells a script, `git bisect run` or a person: `--help` and the
# documentation's table are written from this one list.
EXIT_CODES = (
    (EXIT_PASS, "the invariants hold, or every violation is a registered known issue"),
    (EXIT_VIOLATED, "a violation the registry does not explain, or a registered issue that "
                    "no longer happens where it is expected (stale: update the registry)"),
    (EXIT_USAGE, "usage or bad input, refused before any work: one line on stderr names "
                 "the problem and the fix"),
    (EXIT_INTERNAL, "a bug in the harness itself (harness-error): a bisect stops, TVM is "
                    "not blamed"),
    (EXIT_CANNOT_TEST, "cannot test here: an unsupported operator, TVM or a door's extra "
                       "missing (git bisect run: skip this revision)"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C): the finished work is kept; the same command "
                       "with --resume does the rest"),
    (EXIT_TERMINATED, "terminated (SIGTERM, a cancelled CI job): kept and stopped the same way"),
)

# What an outcome is of: a run (the most severe thing it saw, and a violation's kind), a
# reading of a result against the registry, or a row of the pass sweep.
RUN, READING, SUITE, ROW = "run", "reading", "suite", "row"


class Outcome(enum.StrEnum):
    """Every verdict, registry reading and sweep row the harness reports: one vocabulary
    whose members carry whether they fail a run and their exit code, as lit's ResultCode
    carries isFailure. A member is its own name (`Outcome.PASS == "pass"`), so JSON,
    journals and old rows read the same; nothing is parsed back out of text.

    Within each family, members are listed most severe first: `worst` picks by this order.
    harness-error outranks everything: nothing TVM did can be trusted once our code failed.
    """

    def __new__(cls, name: str, failing: bool, exit_code: int, family: str, meaning: str):
        member = str.__new__(cls, name)
        member._value_ = name
        member.failing = failing
        member.exit = exit_code
        member.family = family
        member.meaning = meaning
        return member

    HARNESS_ERROR = ("harness-error", True, EXIT_INTERNAL, RUN,
                     "the harness's own code raised: a bisect stops, TVM is not blamed")
    CRASH = ("crash", True, EXIT_VIOLATED, RUN, "a signal killed the process running TVM")
    TIMEOUT = ("timeout", True, EXIT_VIOLATED, RUN, "the path ran past its time limit")
    MUTATED = ("mutated", True, EXIT_VIOLATED, RUN, "a pass or stage changed its input")
    LOSSY_ROUNDTRIP = ("lossy-roundtrip", True, EXIT_VIOLATED, RUN,
                       "a copy lost a field, equality or what the module compiles to")
    WRONG_RESULT = ("wrong-result", True, EXIT_VIOLATED, RUN,
                    "the compiled module ran and computed other numbers than its reference")
    # The original yolov3-tiny bug surfaced as extraction *failing*: an error on the path
    # is a regression to bisect, not a reason to skip.
    ERROR = ("error", True, EXIT_VIOLATED, RUN, "TVM raised on the path")
    UNSUPPORTED = ("unsupported", False, EXIT_CANNOT_TEST, RUN,
                   "cannot be tested here (git bisect run: skip this revision)")
    PASS = ("pass", False, EXIT_PASS, RUN, "nothing was violated")

    NEW = ("new", True, EXIT_VIOLATED, READING, "a violation the registry does not explain")
    STALE = ("stale", True, EXIT_VIOLATED, READING,
             "a registered issue that no longer happens where it is expected")
    KNOWN = ("known", False, EXIT_PASS, READING, "every violation is a registered issue")

    # A guarded suite's own outcome, beside the guard's reading: its tests failing on their
    # own or not collecting is not a guard finding, and never a pass either.
    SUITE_FAILED = ("suite-failed", True, EXIT_VIOLATED, SUITE,
                    "the suite's own tests failed or a file did not collect (not the guard's)")
    NO_TESTS = ("no-tests", True, EXIT_VIOLATED, SUITE, "no test ran: nothing was checked")

    NONDETERMINISTIC = ("nondeterministic", True, EXIT_VIOLATED, ROW,
                        "the pass gave two different outputs for one input")
    REJECTED = ("rejected", False, EXIT_PASS, ROW,
                "the pass refused its input, a precondition by rule (cli/sweep_refusals)")
    SKIPPED = ("skipped", False, EXIT_PASS, ROW,
               "the point cannot be reached on this case, or cannot be tested here")
    UNHANDLED = ("unhandled", False, EXIT_PASS, ROW,
                 "the attrs sweep cannot draw this type's values: said, never skipped")

    @classmethod
    def of(cls, name: str) -> "Outcome":
        """The member named `name`; an unknown name is a harness bug, never a pass."""
        try:
            return cls(name)
        except ValueError:
            raise UnknownVerdict(f"unknown outcome {name!r}") from None


class UnknownVerdict(Exception):
    """An outcome this module does not know: a harness bug, never a pass."""


# A run's verdicts, most severe first; a violation's kind is one of them but pass.
VERDICTS = tuple(outcome for outcome in Outcome if outcome.family == RUN)
# What a result or a batch row means once read against the registry.
STATUSES = (Outcome.PASS, Outcome.KNOWN, Outcome.UNSUPPORTED, Outcome.NEW, Outcome.STALE,
            Outcome.HARNESS_ERROR)
# What a row of the pass sweep says about one pass on one module.
ROW_VERDICTS = (Outcome.PASS, Outcome.KNOWN, Outcome.REJECTED, Outcome.SKIPPED,
                Outcome.MUTATED, Outcome.LOSSY_ROUNDTRIP, Outcome.ERROR,
                Outcome.NONDETERMINISTIC, Outcome.CRASH, Outcome.TIMEOUT, Outcome.STALE,
                Outcome.HARNESS_ERROR)
# Verdicts that ended a check early or are ours: a function of the machine, the time limit
# or our bug, not of the input, so neither remembered (the sweep's memo) nor carried.
UNSETTLED = (Outcome.CRASH, Outcome.TIMEOUT, Outcome.HARNESS_ERROR)


def reading(verdict: str, unknown: bool, stale: bool, known: bool) -> Outcome:
    """A result (or a suite's findings) read against the registry, decided here once: a
    harness error or unsupported stands; else any unexplained violation is new, then an
    entry that no longer happens is stale, then known, else pass."""
    verdict = Outcome.of(verdict)
    if verdict in (Outcome.HARNESS_ERROR, Outcome.UNSUPPORTED):
        return verdict
    if unknown:
        return Outcome.NEW
    if stale:
        return Outcome.STALE
    return Outcome.KNOWN if known else Outcome.PASS


def first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, as a violation's (or a record's) detail. A first
    line that ends in a colon announces the next ("LLVM module verification failed with the
    following errors:" / "Invalid operand types for FCmp instruction"), which is kept too:
    without it the registry cannot tell one such failure from another."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        lines[0] = f"{lines[0]} {lines[1]}"
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


class BadInput(Exception):
    """The user's input is wrong (unknown case, unreadable file): exit 2, one line."""


def exit_code_of_rows(rows) -> int:
    """A batch's exit code from its rows' `failing` and `exit` fields: a harness error
    anywhere wins (4), then any failing row (1); else 0 (unsupported rows included)."""
    rows = list(rows)
    if any(row["exit"] == EXIT_INTERNAL for row in rows):
        return EXIT_INTERNAL
    return EXIT_VIOLATED if any(row["failing"] for row in rows) else EXIT_PASS


def exit_code(verdict: str) -> int:
    """A run's exit code from its verdict (the table above)."""
    outcome = Outcome.of(verdict)
    if outcome.family != RUN:
        raise UnknownVerdict(f"{verdict!r} is not a run's verdict")
    return outcome.exit


def worst(verdicts) -> Outcome:
    """The most severe of a run's verdicts (pass when there are none)."""
    present = {Outcome.of(verdict) for verdict in verdicts}
    stray = sorted(outcome for outcome in present if outcome.family != RUN)
    if stray:
        raise UnknownVerdict(f"not a run's verdict: {stray}")
    return next((verdict for verdict in VERDICTS if verdict in present), Outcome.PASS)


class Phase(enum.StrEnum):
    """Where a violation was seen, as data (never parsed out of a stage name)."""
    STAGE = "stage"              # the stage's own call (a pass raising or mutating a module)
    CHECKS = "checks"            # the harness's checks around a stage (TVM failing in a hash)
    COPY = "copy"                # a copier, the comparison of a copy, the path over a copy
    DETERMINISM = "determinism"  # the final stage run a second time on the same input
    ANSWER = "answer"            # the compiled module run, its numbers compared (oracles.answers)
    PROCESS = "process"          # the child outside any stage (setup; an early crash)


PHASES = tuple(Phase)


@dataclasses.dataclass
class Violation:
    kind: Outcome    # a run's verdict other than pass
    stage: str       # the stage that was running or whose output was checked
    access_path: str  # where in the IR the difference is (or what was running)
    detail: str
    pass_name: str | None = None   # the innermost pass, where one applies ("pass" in JSON)
    pass_index: int | None = None  # its position among the passes the stage ran (1-based)
    phase: Phase = Phase.STAGE     # what was running when it was seen
    copier: str | None = None      # phase copy: deepcopy | json | tvmscript (or a hook's)
    signal: str | None = None      # a crash's signal (SIGSEGV), None for an exit without one
    copied: str | None = None      # phase copy: which module was copied, "input" | "output"

    def __post_init__(self):
        self.kind = Outcome.of(self.kind)   # a name read back from JSON becomes a member
        if self.kind.family != RUN or self.kind == Outcome.PASS:
            raise UnknownVerdict(f"unknown violation kind {self.kind!r}")
        try:
            self.phase = Phase(self.phase)
        except ValueError:
            raise UnknownVerdict(f"unknown violation phase {self.phase!r}") from None

    def where(self) -> str:
        phase = "" if self.phase == Phase.STAGE else f" ({self.phase}" + (
            f", {self.copier}" if self.copier else "") + ")"
        if self.pass_name is None:
            return f"stage {self.stage}{phase}"
        index = f" (#{self.pass_index})" if self.pass_index else ""
        return f"stage {self.stage}{phase}, pass {self.pass_name}{index}"

    def one_line(self) -> str:
        return f"{self.kind} at {self.where()}: {self.access_path}: {self.detail}"

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["pass"] = data.pop("pass_name")
        for name in _ONLY_WHEN_SET:
            if data[name] is None:
                del data[name]
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Violation":
        data = dict(data)
        if "pass" in data:
            data["pass_name"] = data.pop("pass")
        if "path" in data:   # the field's old name, in journals written before it changed
            data["access_path"] = data.pop("path")
        _typed_facts_of_older_rows(data)
        # an event's name, a printed signature: derived, not fields
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


# Fields left out of a violation's JSON when unset: rows without them read as before.
_ONLY_WHEN_SET = ("signal", "copied")


def _typed_facts_of_older_rows(data: dict) -> None:
    """Rows written before `signal` and `copied` were fields said them in the detail text
    ("SIGSEGV in stage ...", "json copy of the output ..."): read here once, never by a
    use site."""
    detail = str(data.get("detail", ""))
    if data.get("kind") == Outcome.CRASH and "signal" not in data and detail.startswith("SIG"):
        data["signal"] = detail.split(" ", 1)[0]
    if data.get("phase") == Phase.COPY and "copied" not in data:
        data["copied"] = next((what for what in ("input", "output")
                               if f" copy of the {what}" in detail), None)
