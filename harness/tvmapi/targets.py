"""Targets as users write them, made into what each release accepts.

0.27 refuses the CLI string form ("llvm -mcpu=skylake") and wants the dict form; `num-cores`
exists for some kinds only; array options want lists. A target TVM refuses is bad input.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any

from harness.classify import Call
from harness.tvmapi.loading import tvm
from harness.verdict import BadInput


def target_config(text: str) -> dict:
    """The target a user named, as the dict TVM takes: a kind ("llvm"), TVM's JSON form
    ('{"kind": "llvm", "mcpu": "skylake"}'), or the CLI string form 0.27 refuses
    ("llvm -mcpu=skylake -mattr=+avx2,+fma": comma lists become arrays, numbers ints)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise BadInput(f"--target {text!r} is not valid JSON ({exc})") from None
        if not isinstance(config, dict) or not isinstance(config.get("kind"), str):
            raise BadInput(f"--target {text!r}: the JSON form needs a \"kind\", e.g. "
                           '{"kind": "llvm", "mcpu": "skylake"}')
        return config
    words = text.split()
    if not words:
        raise BadInput("--target is empty: give a target kind, e.g. llvm")
    config: dict[str, Any] = {"kind": words[0]}
    for word in words[1:]:
        key, has_value, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not key:
            raise BadInput(f"--target {text!r}: options are written -KEY=VALUE or -FLAG, "
                           f"not {word!r}")
        config[key] = _target_value(value) if has_value else True
    return config


def _target_value(text: str):
    if "," in text:
        return [part for part in text.split(",") if part]
    if text.lstrip("-").isdigit():
        return int(text)
    return {"true": True, "false": False}.get(text.lower(), text)


def make_target(text: str, num_cores: int):
    """The Target, with `num-cores` where the kind takes it (llvm does, cuda and c do not).
    A target TVM refuses is bad input, with TVM's one-line reason."""
    return tvm().target.Target(target_dict(text, num_cores))


# TVM's refusal of a single value where its schema wants an array ("-mattr=+avx2").
_WANTS_ARRAY = re.compile(r"Option '([^']+)': expected type 'Array<")


@functools.lru_cache(maxsize=64)
def _accepted(config_json: str, num_cores: int) -> str:
    """The config (as JSON) TVM makes a Target of: num-cores added where the kind takes it,
    a single value made a list where TVM's schema wants an array."""
    config = json.loads(config_json)
    with_cores = "num-cores" not in config
    for _ in range(len(config) + 2):
        candidate = {**config, "num-cores": num_cores} if with_cores else config
        made = Call.of("", tvm().target.Target, candidate)
        if made.ok:
            return json.dumps(candidate)
        text = str(made.error)   # TVM's refusal text decides
        wants_array = _WANTS_ARRAY.search(text)
        if with_cores and "option 'num-cores'" in text:   # "Unknown config option ..."
            with_cores = False        # this kind takes no num-cores (cuda, c)
        elif wants_array and isinstance(config.get(wants_array.group(1)), str):
            config[wants_array.group(1)] = [config[wants_array.group(1)]]
        else:
            raise BadInput(f"TVM refuses it: {made.detail}")
    raise BadInput(f"TVM refuses it: {json.dumps(config)}")


def target_dict(text: str, num_cores: int) -> dict:
    """The config TVM accepted for --target `text` (what a reproducer spells out)."""
    config = target_config(text)
    try:
        return json.loads(_accepted(json.dumps(config, sort_keys=True), num_cores))
    except BadInput as exc:
        raise BadInput(f"--target {text!r}: {exc}") from None
