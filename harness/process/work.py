"""What a child does with its case besides (or instead of) checking it: one typed request,
where run_isolated took four optional dicts that were never meant to be given together."""
from __future__ import annotations

import dataclasses

VALIDATE = "validate"            # build the path (target, stages, injected pass), run nothing
REPRODUCER = "reproducer"        # check, then write repro.py for the violation of a signature
CROSS_RELEASE = "cross-release"  # one half of a case across two releases, not the check
TASK = "task"                    # the Relax-level reducer's export or edit, not the check
IMPORT = "import"                # the import stage alone: the converters it used (reach)
KINDS = (VALIDATE, REPRODUCER, CROSS_RELEASE, TASK, IMPORT)


@dataclasses.dataclass(frozen=True)
class Work:
    kind: str
    request: dict = dataclasses.field(default_factory=dict)   # what the kind needs

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown child work {self.kind!r}")   # our bug

    @classmethod
    def validate(cls) -> Work:
        return cls(VALIDATE)

    @classmethod
    def reproducer(cls, request: dict) -> Work:
        """{out_dir, command, sizes, signature, deadline[, violation]}: with `violation`,
        only write (the check crashed or hung in an earlier child)."""
        return cls(REPRODUCER, request)

    @classmethod
    def cross_release(cls, step: dict) -> Work:
        """{"save": FOLDER} or {"load": FOLDER} (runner.cross_release)."""
        return cls(CROSS_RELEASE, step)

    @classmethod
    def task(cls, task: dict) -> Work:
        """The reducer's: write the imported module, or edit one (runner.relax_task)."""
        return cls(TASK, task)

    @classmethod
    def import_only(cls) -> Work:
        """The model through its door's frontend, no path: what `reach` measures."""
        return cls(IMPORT)

    def to_json(self) -> dict:
        return {"kind": self.kind, "request": self.request}

    @classmethod
    def from_json(cls, data: dict | None) -> Work | None:
        return cls(data["kind"], data["request"]) if data else None
