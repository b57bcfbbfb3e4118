"""`python -m harness upstream ENTRY_ID [--out FILE]`: a registered finding as a GitHub issue.

The last mile from a finding to a report upstream can act on, in apache/tvm's bug-report
shape (.github/ISSUE_TEMPLATE/bug-report.md: its front matter, then Expected behavior,
Actual behavior, Environment, Steps to reproduce, Triage), from the registry entry
alone: its `title`, `expected` and `actual`; the line of source at fault (`at_fault`,
linked at the commit it was read at); the releases measured (`tvm`, `tvm_ffi`,
`measured_on`), the first bad release and commit and the fixing commit where known;
and the entry's standalone reproducer inlined whole, so the issue needs nothing else.

Nothing is guessed: an entry without a title, the behaviours or a reproducer is refused
(exit 2, naming the fields to add to its known_issues.toml); an optional field it lacks
is written as unknown in the report and listed on stderr.
"""
from __future__ import annotations

import difflib
import os
import platform
import re
import sys

from harness.catalog import known_issues
from harness.catalog.issue_entry import KnownIssue, source_line
from harness.verdict import EXIT_PASS, BadInput

LABELS = ("needs-triage", "type: bug")   # the bug-report template's
TEMPLATE = "https://github.com/apache/tvm/blob/main/.github/ISSUE_TEMPLATE/bug-report.md"
REQUIRED = ("title", "expected", "actual", "reproducer")
# Said to be unknown in the report when missing (the first three only matter once known).
OPTIONAL = ("at_fault", "first_bad_release", "introduced_by", "measured_on")
_COMMIT = re.compile(r"^(?P<hash>[0-9a-f]{10,40}) (?P<title>\S.*)$", re.S)


def commit_of(entry: KnownIssue, field: str) -> tuple[str, str] | None:
    """`introduced_by` / `fixed_by` as (hash, title), or None when the field is empty."""
    text = getattr(entry, field)
    if not text:
        return None
    match = _COMMIT.match(_unwrap(text))
    if match is None:
        raise BadInput(f"[{entry.id}] {field} must read '<10- to 40-digit hash> <commit "
                       f"title>', got {_unwrap(text)[:80]!r}")
    return match["hash"], match["title"]


def find(entry_id: str) -> KnownIssue:
    """The registry entry `entry_id`; an unknown one is bad input naming the nearest ids."""
    entries = {entry.id: entry for entry in known_issues.registry()}
    if entry_id in entries:
        return entries[entry_id]
    near = difflib.get_close_matches(entry_id, list(entries), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else "the ids are in cases/known_issues/"
    raise BadInput(f"no known-issue entry {entry_id!r}; {hint}")


def missing(entry: KnownIssue) -> tuple[list[str], list[str]]:
    """(required fields the entry lacks, optional ones it lacks)."""
    return ([name for name in REQUIRED if not getattr(entry, name)],
            [name for name in OPTIONAL if not getattr(entry, name)])


def report(entry: KnownIssue) -> str:
    """The issue's text: front matter (title, labels) and the template's five sections."""
    required, _ = missing(entry)
    if required:
        raise BadInput(f"[{entry.id}] cannot be written as an upstream report: it has no "
                       f"{', '.join(required)} (add them to {_registry_file(entry)})")
    sections = [
        "---", f"title: {_quoted(entry.title)}", f"labels: {_quoted(', '.join(LABELS))}", "---",
        "", "### Expected behavior", "", _unwrap(entry.expected),
        "", "### Actual behavior", "", _unwrap(entry.actual), "", _cause(entry),
        *_related(entry), *_fix(entry),
        "", "### Environment", "", *_environment(entry),
        "", "### Steps to reproduce", "", *_steps(entry),
        "", "### Triage", "", *(f"* {label}" for label in LABELS), "",
    ]
    return "\n".join(sections)


def _cause(entry: KnownIssue) -> str:
    where = source_line(entry)
    if where is None:
        return "Where in the source: not located yet."
    return (f"Where in the source: [`{where.path}:{where.line}`]({where.url})"
            + (f" of {where.repo}" if where.repo != "apache/tvm" else "")
            + f" (read at {where.commit}): {where.why}.")


def _related(entry: KnownIssue) -> list[str]:
    """Upstream issues and pull requests the entry's reference names."""
    links = re.findall(r"https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+", entry.reference)
    return ["", "Related: " + ", ".join(links)] if links else []


def _fix(entry: KnownIssue) -> list[str]:
    """The entry's patch, inlined, with what verified it (`upstream ID --fix`)."""
    if not entry.fix:
        return []
    path = os.path.join(entry.base, entry.fix)
    try:
        with open(path) as handle:
            patch = handle.read().rstrip("\n")
    except OSError as exc:
        raise BadInput(f"[{entry.id}] its fix {path} cannot be read: {exc.strerror}") from None
    verified = _unwrap(entry.fix_verified) or "not verified yet (`upstream ID --fix` does it)"
    return ["", "### A fix", "", f"Verified: {verified}.", "", "```diff", patch, "```"]


def _environment(entry: KnownIssue) -> list[str]:
    measured = [f"- Measured on {_unwrap(item)}" for item in entry.measured_on] or \
        ["- Measured on: not recorded"]
    ranges = f"apache-tvm {entry.tvm}" if entry.tvm else "any apache-tvm measured"
    ranges += f", apache-tvm-ffi {entry.tvm_ffi}" if entry.tvm_ffi else ""
    introduced, fixed = commit_of(entry, "introduced_by"), commit_of(entry, "fixed_by")
    lines = measured + [
        f"- Bad on (the versions measured): {ranges}",
        "- First bad release: " + (_unwrap(entry.first_bad_release) or
                                   "not known (no release before the range was measured "
                                   "good)"),
        "- First bad commit: " + (f"{introduced[0]} {introduced[1]}" if introduced
                                  else "not known (not bisected)"),
    ]
    if fixed:
        lines.append(f"- Fixed by: {fixed[0]} {fixed[1]}")
    return lines + [f"- Python {platform.python_version()}, {_system()} (where this report "
                    "was written)"]


def _steps(entry: KnownIssue) -> list[str]:
    path = os.path.join(entry.base, entry.reproducer)
    try:
        with open(path) as handle:
            script = handle.read().rstrip("\n")
    except OSError as exc:
        raise BadInput(f"[{entry.id}] its reproducer {path} cannot be read: "
                       f"{exc.strerror}") from None
    name = os.path.basename(path)
    needs = " and torch" if re.search(r"^\s*import torch\b", script, re.M) else ""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", script)), default=0))
    return [f"Save the script below as `{name}` and run `python {name}` in a Python with "
            f"apache-tvm{needs} installed: it exits 1 when the bug reproduces, 0 when it "
            "does not, 2 when it cannot run there.", "", fence + "python", script, fence]


def _unwrap(text: str) -> str:
    """A registry value as one paragraph: GitHub shows each newline of an issue as a break."""
    return " ".join(text.split())


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _system() -> str:
    name = f"{platform.system()} {platform.machine()}"
    try:
        return f"{name} ({platform.freedesktop_os_release()['PRETTY_NAME']})"
    except (OSError, KeyError):
        return name


def _registry_file(entry: KnownIssue) -> str:
    return entry.file or os.path.join(entry.base, "known_issues.toml")


def cmd_upstream(args) -> int:
    entry = find(args.entry)
    if args.fix:
        from harness.cli import fix_verify
        return fix_verify.verify(entry, args)
    text = report(entry)
    _, unknown = missing(entry)
    if args.out:
        out = os.path.abspath(args.out)
        if os.path.isdir(out) or not os.path.isdir(os.path.dirname(out)):
            raise BadInput(f"--out {args.out}: must be a file in an existing folder")
        with open(out, "w") as handle:
            handle.write(text)
        print(f"upstream: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if unknown:
        print(f"upstream: [{entry.id}] has no {', '.join(unknown)}: the report says it is "
              "not known", file=sys.stderr)
    return EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser("upstream", help="write a registered finding as a GitHub issue in "
                                        "apache/tvm's bug-report shape")
    p.add_argument("entry", metavar="ENTRY_ID", help="a known-issue id (cases/known_issues/)")
    p.add_argument("--out", metavar="FILE", help="write the issue's text there (default: stdout)")
    p.add_argument("--fix", metavar="PATCH",
                   help="verify a patch to TVM fixes the entry (`try --patch` on --source: its "
                        "reproducer stops, nothing else selected changes); when it does, the "
                        "patch is kept with the entry and the report carries it")
    p.add_argument("--source", metavar="TVM_CHECKOUT", help="with --fix: the TVM checkout")
    p.add_argument("--base", default="HEAD", metavar="REF",
                   help="with --fix: the commit the patch applies to (default HEAD)")
    p.add_argument("--build-dir", default=None, metavar="DIR")
    p.add_argument("--store", default=None, metavar="DIR")
    p.add_argument("--state", default=None, metavar="DIR")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.set_defaults(func=cmd_upstream)
