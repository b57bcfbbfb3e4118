"""The release sets the nightly covers: each apache-tvm release with the tvm-ffi pin that
works for it, read from setup.cfg's extras (`tvm`, `tvm025`, `tvm026`, ...), where each
pin says why, so the pins live in one place.
"""
from __future__ import annotations

import configparser
import functools
import os

from packaging.requirements import Requirement
from packaging.version import Version

from harness.paths import REPO_ROOT


@functools.cache
def release_sets() -> dict[str, dict[str, str]]:
    """{apache-tvm version: {package: version}}, oldest first."""
    config = configparser.ConfigParser()
    config.read(os.path.join(REPO_ROOT, "setup.cfg"))
    extras = config["options.extras_require"]
    sets = {}
    for name in extras:
        if name != "tvm" and not (name.startswith("tvm0") and name[3:].isdigit()):
            continue
        pins = {}
        for line in extras[name].splitlines():
            line = line.split("#")[0].strip()
            if line:
                requirement = Requirement(line)
                (spec,) = requirement.specifier
                pins[requirement.name] = spec.version
        sets[pins["apache-tvm"]] = pins
    return dict(sorted(sets.items(), key=lambda item: Version(item[0])))
