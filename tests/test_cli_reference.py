"""The command-line reference's usage block is the CLI's: every command and option `--help`
shows, and nothing else, shown required or optional as the parser takes it.

The block (docs/reference/cli.md, the ```sh block that starts `python -m harness list`)
is read with a small grammar: a line `python -m harness COMMAND ...` and its indented
continuation lines are that command's usage; `[...]` is optional, `A|B` alternatives,
`X ...` (or `X...`) repeatable, `#` starts a comment, and the comment line
`# every command: ...` holds options every command takes. Compared with the argparse
parsers of harness/cli/main.py:

- every subcommand has a line, and every line names a subcommand;
- every option of a subcommand appears (one of its spellings), and every option shown
  exists;
- an option the parser requires is shown outside brackets, any other inside them
  (but for the few the command refuses to run without: REQUIRED_IN_PRACTICE);
- an option that takes a value is shown with one, a flag without; a repeatable one
  (action append) with `...`; one with choices lists exactly its choices (`a|b|c`);
- the positionals, in order: required or optional, one or many, their choices;
- `-- ARGS` only for a command that passes arguments on (guard-suite, to pytest).

Metavars are free (`--timeout S` for argparse's TIMEOUT): the block is for reading.
Adding an option or a command means adding it to the block; this test says where.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re

from helpers import ROOT

from harness.cli.main import build_parser

REFERENCE = os.path.join(ROOT, "docs", "reference", "cli.md")
WHERE = "usage block of docs/reference/cli.md"
PROGRAM = "python -m harness "
EVERY_COMMAND = "# every command:"
# Optional to argparse, but the command refuses to run without one: shown required.
REQUIRED_IN_PRACTICE = {("matrix", "--set"): "cmd_matrix: 'give at least one --set'"}
OPTION = re.compile(r"^--[a-z][a-z0-9-]*$")


@dataclasses.dataclass
class Shown:
    """One option or positional as the block shows it."""
    name: str                 # --option, or the positional's word
    optional: bool            # inside brackets
    value: str | None = None  # the option's value word (None: shown as a flag)
    repeated: bool = False    # followed by `...`


def usage_block() -> list[str]:
    """The reference's usage block, one line a list item."""
    text = open(REFERENCE).read()
    block = text.split("```sh\n" + PROGRAM + "list", 1)[1].split("\n```", 1)[0]
    return (PROGRAM + "list" + block).splitlines()


def usages(lines: list[str]) -> tuple[dict[str, str], str]:
    """{command: its usage text} and the `# every command:` usage."""
    commands: dict[str, str] = {}
    every = ""
    current = None
    for line in lines:
        if line.startswith(EVERY_COMMAND):
            every += " " + line[len(EVERY_COMMAND):].split("(", 1)[0]
            current = None
        elif line.startswith("#") or not line.strip():
            current = None
        elif line.startswith(PROGRAM):
            current, _, rest = line[len(PROGRAM):].partition(" ")
            assert current not in commands, f"{WHERE}: {current} shown twice"
            commands[current] = rest
        else:
            assert line[:1].isspace() and current, f"{WHERE}: stray line {line!r}"
            commands[current] += " " + line
    return {name: text.split(" #", 1)[0] for name, text in commands.items()}, every


def tokens(usage: str) -> list[str]:
    """Words, brackets and `|`, `...` split off (`GLOB...` -> `GLOB`, `...`)."""
    spaced = usage.replace("[", " [ ").replace("]", " ] ")
    words = []
    for word in spaced.split():
        if word.endswith("...") and word != "...":
            words += [word[:-3], "..."]
        else:
            words.append(word)
    return words


def _is_word(token: str | None) -> bool:
    return token is not None and token not in ("[", "]", "|", "...", "--") \
        and not token.startswith("--")


def parse_usage(usage: str) -> tuple[list[Shown], list[Shown], bool]:
    """(options, positionals, whether `-- ARGS` is shown) of one command's usage."""
    words = tokens(usage)
    options: list[Shown] = []
    positionals: list[Shown] = []
    depth, index = 0, 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else None
        if word == "[":
            depth += 1
        elif word == "]":
            depth -= 1
        elif word == "--":
            return options, positionals, True
        elif word.startswith("--") and "|" in word:    # --resume|--fresh: flags
            options += [Shown(name, depth > 0) for name in word.split("|")]
        elif word.startswith("--"):
            value = following if _is_word(following) else None
            index += value is not None
            repeated = index + 1 < len(words) and words[index + 1] == "..."
            options.append(Shown(word, depth > 0, value, repeated))
        elif _is_word(word):
            positionals.append(Shown(word, depth > 0, repeated=following == "..."))
        index += 1
    return options, positionals, False


def subcommands() -> dict[str, argparse.ArgumentParser]:
    return build_parser().commands


def documented_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions
            if not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS]


def option_problems(command: str, parser, shown: list[Shown]) -> list[str]:
    """What the block says of `command`'s options that its parser does not."""
    problems = []
    by_name: dict[str, Shown] = {}
    for option in shown:   # `--set X [--set X ...]`: its first showing says if it is required
        by_name.setdefault(option.name, option)
    known = set()
    for action in documented_actions(parser):
        if not action.option_strings:
            continue
        known.update(action.option_strings)
        spelled = [name for name in action.option_strings if name in by_name]
        name = action.option_strings[0]
        if not spelled:
            problems.append(f"{command}: {name} is missing")
            continue
        option = by_name[spelled[0]]
        required = action.required or (command, name) in REQUIRED_IN_PRACTICE
        if option.optional == required:
            written = "optional" if option.optional else "required"
            problems.append(f"{command}: {name} is {written} in the reference, "
                            f"{'required' if required else 'optional'} in the CLI")
        takes_value = action.nargs != 0
        if takes_value != (option.value is not None):
            problems.append(f"{command}: {name} takes a value: show `{name} X`" if takes_value
                            else f"{command}: {name} is a flag: show no value")
        repeatable = isinstance(action, argparse._AppendAction)
        if repeatable != any(o.repeated for o in shown if o.name in action.option_strings):
            problems.append(f"{command}: {name} is repeatable: show `{name} X ...`"
                            if repeatable else f"{command}: {name} is not repeatable")
        if action.choices and option.value is not None \
                and set(option.value.split("|")) != set(map(str, action.choices)):
            problems.append(f"{command}: {name} takes {'|'.join(map(str, action.choices))}, "
                            f"the reference shows {option.value}")
    problems += [f"{command}: {option.name} is not an option of the CLI"
                 for option in shown if option.name not in known]
    return problems


def positional_problems(command: str, parser, shown: list[Shown], passthrough: bool) -> list[str]:
    """The positionals the block shows against the parser's, in order."""
    actions = [action for action in documented_actions(parser) if not action.option_strings]
    wanted = [(action.nargs in ("?", "*"), action.nargs in ("*", "+"),
               set(map(str, action.choices)) if action.choices else None) for action in actions]
    seen = [(p.optional, p.repeated, set(p.name.split("|")) if "|" in p.name else None)
            for p in shown]
    problems = []
    if [w[:2] for w in wanted] != [s[:2] for s in seen]:
        problems.append(f"{command}: positionals (optional, many) are {[w[:2] for w in wanted]} "
                        f"in the CLI, {[s[:2] for s in seen]} in the reference "
                        f"({' '.join(p.name for p in shown) or 'none'})")
    for (_, _, choices), (_, _, shown_choices) in zip(wanted, seen, strict=False):
        if choices and choices != shown_choices:
            problems.append(f"{command}: a positional takes {'|'.join(sorted(choices))}, "
                            f"the reference shows {shown_choices}")
    if passthrough != bool(parser.get_default("takes_pytest_args")):
        problems.append(f"{command}: `-- ARGS` " + ("is shown but not taken" if passthrough
                                                    else "is taken but not shown"))
    return problems


def test_the_reference_usage_block_is_the_clis():
    parsers = subcommands()
    commands, every = usages(usage_block())
    every_options, _, _ = parse_usage(every)
    problems = [f"{name}: no such command" for name in commands if name not in parsers]
    problems += [f"{name}: missing from the {WHERE}" for name in parsers
                 if name not in commands]
    for name, parser in parsers.items():
        if name not in commands:
            continue
        options, positionals, passthrough = parse_usage(commands[name])
        problems += option_problems(name, parser, options + every_options)
        problems += positional_problems(name, parser, positionals, passthrough)
    assert not problems, ("docs/reference/cli.md's usage block and the CLI differ; "
                          "update the block:\n  " + "\n  ".join(problems))


def test_the_usage_grammar_sees_drift():
    """The comparison itself: an option gone missing, shown required, given a value it
    does not take, or a command unknown, is each reported."""
    parser = subcommands()["report"]
    options, positionals, _ = parse_usage("GLOB --all [--resume X] [--jobs] [--nosuch]")
    problems = "\n".join(option_problems("report", parser, options)
                         + positional_problems("report", parser, positionals, True))
    for expected in ("--out is missing", "--all is required in the reference",
                     "--resume is a flag", "--jobs takes a value", "--nosuch is not an option",
                     "positionals (optional, many) are [(True, True)] in the CLI, "
                     "[(False, False)]", "`-- ARGS` is shown but not taken"):
        assert expected in problems, problems
    commands, _ = usages([PROGRAM + "list [GLOB...]", "        [--tags]", PROGRAM + "nosuch"])
    assert commands == {"list": "[GLOB...]         [--tags]", "nosuch": ""}
