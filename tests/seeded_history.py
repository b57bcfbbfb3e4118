"""A seeded branch: ordinary commits, one that makes a pass mutate its input, one that
breaks a converter, then a fix; each commit is an edit of files in a git checkout.

Used twice: by tests/test_watch.py on a toy history (its bench reads the seeded markers
back), and on top of a real apache/tvm commit by the nightly test there, whose edits are
real Python changes to TVM (no rebuild: Python-only commits reuse the build).
"""
from __future__ import annotations

import subprocess
from typing import Callable


def git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo, message: str, edits: dict[str, Callable[[str], str]]) -> str:
    """Apply each edit (old text -> new text; "" when the file is new) and commit."""
    for relative, edit in edits.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text() if path.exists() else ""
        path.write_text(edit(old))
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=seed@example.invalid", "-c", "user.name=seed", "commit", "-q",
        "-m", message)
    return git(repo, "rev-parse", "HEAD")


def append(line: str) -> Callable[[str], str]:
    return lambda old: old + line + "\n"


def replace(old_text: str, new_text: str) -> Callable[[str], str]:
    def edit(old: str) -> str:
        assert old_text in old, f"the seeded edit's anchor is not in the file: {old_text!r}"
        return old.replace(old_text, new_text, 1)
    return edit


def seed(repo, ordinary: str, mutation: dict, converter: dict, fix: dict) -> dict[str, str]:
    """The branch's commits by role, oldest first: ordinary ones around the two seeded
    regressions (a pass mutating its input, a converter that raises), then the fix."""
    made = {}
    made["ordinary-1"] = commit(repo, "[Docs] Wording (#90001)", {ordinary: append("# one")})
    made["mutation"] = commit(repo, "[Relax] Annotate functions in the zero pipeline (#90002)",
                              mutation)
    made["ordinary-2"] = commit(repo, "[Docs] More wording (#90003)", {ordinary: append("# two")})
    made["converter"] = commit(repo, "[Frontend][ONNX] Stricter Concat (#90004)", converter)
    made["ordinary-3"] = commit(repo, "[CI] Bump a version (#90005)", {ordinary: append("# 3")})
    made["fix"] = commit(repo, "[Relax] Copy before annotating in the zero pipeline (#90006)",
                         fix)
    return made
