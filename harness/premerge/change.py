"""The change a try checks: its base and head commits, and the lines of each file it touches.

A head is a ref of the checkout, or a patch applied on the base and committed on a local
branch named after it (`harness-try/<patch>-<digest>`) without touching the checkout's
working tree or index (git apply --cached into a temporary index): the same patch on the
same base is the same commit, so a try resumes, and the checkout is never left half
patched. What changed is read from `git diff --unified=0`: per file, the head's changed
lines and the base's removed ones, which premerge/touched reads against each file's
definitions.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import subprocess
import tempfile

from harness.verdict import BadInput
from harness.versions import commit_bisect
from harness.versions.source_checkout import git

BRANCH_PREFIX = "harness-try/"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclasses.dataclass(frozen=True)
class FileChange:
    path: str                          # relative to the checkout, the head's name
    old_path: str                      # the base's name ("" for a new file)
    head_lines: frozenset[int]         # lines of the head's file added or changed
    base_lines: frozenset[int]         # lines of the base's file removed or changed

    @property
    def added(self) -> bool:
        return not self.old_path

    @property
    def deleted(self) -> bool:
        return not self.path


@dataclasses.dataclass(frozen=True)
class Change:
    source: str
    base: str                          # full hashes
    head: str
    head_label: str                    # what the user named: a ref, or the patch file
    files: tuple[FileChange, ...]

    def text_at(self, commit: str, path: str) -> str:
        """A file's text at the base or the head ("" where it does not exist)."""
        if not path:
            return ""
        proc = subprocess.run(["git", "-C", self.source, "show", f"{commit}:{path}"],
                              capture_output=True, text=True)
        return proc.stdout if proc.returncode == 0 else ""

    def lines_changed(self) -> int:
        return sum(len(item.head_lines) + len(item.base_lines) for item in self.files)


def of_refs(source: str, base: str, head: str) -> Change:
    base_commit = commit_bisect.resolve(source, base)
    head_commit = commit_bisect.resolve(source, head)
    return Change(source, base_commit, head_commit, head, files_between(source, base_commit,
                                                                        head_commit))


def of_patch(source: str, base: str, patch: str) -> Change:
    """The patch committed on the base, on a branch named after it (reused when there)."""
    if not os.path.isfile(patch):
        raise BadInput(f"--patch {patch}: no such file")
    base_commit = commit_bisect.resolve(source, base)
    with open(patch, "rb") as handle:
        content = handle.read()
    if not content.strip():
        raise BadInput(f"--patch {patch} is empty")
    digest = hashlib.sha256(base_commit.encode() + content).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(patch)).strip("-.") or "patch"
    branch = f"{BRANCH_PREFIX}{stem}-{digest}"
    existing = git(source, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}",
                   check=False)
    head_commit = existing or _commit_patch(source, base_commit, os.path.abspath(patch),
                                            branch)
    return Change(source, base_commit, head_commit, os.path.basename(patch),
                  files_between(source, base_commit, head_commit))


def _commit_patch(source: str, base: str, patch: str, branch: str) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(scratch, "index"),
               "GIT_AUTHOR_NAME": "harness try", "GIT_AUTHOR_EMAIL": "try@example.invalid",
               "GIT_COMMITTER_NAME": "harness try",
               "GIT_COMMITTER_EMAIL": "try@example.invalid",
               # the same patch on the same base is the same commit: a try resumes
               "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
               "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}

        def run(*args: str) -> str:
            proc = subprocess.run(["git", "-C", source, *args], capture_output=True,
                                  text=True, env=env)
            if proc.returncode != 0:
                why = (proc.stderr.strip().splitlines() or ["?"])[-1]
                raise BadInput(f"--patch {os.path.basename(patch)} does not apply on "
                               f"{base[:10]}: {why}")
            return proc.stdout.strip()
        run("read-tree", base)
        run("apply", "--cached", "--whitespace=nowarn", patch)
        tree = run("write-tree")
        if tree == run("rev-parse", f"{base}^{{tree}}"):
            raise BadInput(f"--patch {os.path.basename(patch)} changes nothing on {base[:10]}")
        commit = run("commit-tree", tree, "-p", base, "-m",
                     f"harness try: {os.path.basename(patch)}")
    git(source, "branch", "--force", branch, commit)
    return commit


def files_between(source: str, base: str, head: str) -> tuple[FileChange, ...]:
    diff = git(source, "diff", "--unified=0", "--no-color", "--no-renames", base, head)
    found: list[FileChange] = []
    old_path = new_path = None
    head_lines: set[int] = set()
    base_lines: set[int] = set()

    def close() -> None:
        if old_path is not None or new_path is not None:
            found.append(FileChange(new_path or "", old_path or "", frozenset(head_lines),
                                    frozenset(base_lines)))

    for line in diff.splitlines():
        if line.startswith("diff --git "):
            close()
            old_path = new_path = None
            head_lines, base_lines = set(), set()
            parts = line.split(" b/", 1)
            new_path = old_path = parts[1] if len(parts) == 2 else ""
        elif line.startswith("--- "):
            old_path = "" if line == "--- /dev/null" else line[len("--- a/"):]
        elif line.startswith("+++ "):
            new_path = "" if line == "+++ /dev/null" else line[len("+++ b/"):]
        else:
            hunk = _HUNK.match(line)
            if hunk:
                old_start, old_count = int(hunk.group(1)), int(hunk.group(2) or 1)
                new_start, new_count = int(hunk.group(3)), int(hunk.group(4) or 1)
                base_lines.update(range(old_start, old_start + old_count))
                head_lines.update(range(new_start, new_start + new_count))
                if not new_count:   # a pure removal: the head's line where it was
                    head_lines.add(new_start)
    close()
    return tuple(found)
