"""What the package and the assertscope binary must agree on, as the binary defines it in
src/contract.rs: the values come from _contract_values.py, which tests/contract.rs checks byte
for byte against src/contract.rs; the rules here it checks rule by rule."""

import os

# The values, written from src/contract.rs (see _contract_values.py): environment variables
# the binary sets for the processes it starts, the Ray hook, the guard's modes (the first is
# the default), launcher variables in order of preference (torchrun / accelerate, Slurm,
# Open MPI, MPICH), the schemas of a diagnosis and of a guard report, and the facts document
# and command line of `python -m assertscope.scan`.
from ._contract_values import (  # noqa: F401
    BIN_ENV,
    CPU_ENV,
    DIAGNOSIS_SCHEMA,
    FOUND_NOTE,
    GUARD_ENV,
    GUARD_ERROR_TYPE,
    GUARD_MODE_ENV,
    GUARD_MODES,
    GUARD_REPORT_SCHEMA,
    LOCAL_RANK_VARIABLES,
    RANK_VARIABLES,
    RAY_HOOK_ENV,
    RAY_RUN_ID_SUFFIX,
    RAY_RUNTIME_ENV_ENV,
    RAY_RUNTIME_ENV_HOOK,
    REPORT_DIR_ENV,
    REPORTED_BY_RUN,
    RUN_ID_ENV,
    SCAN_FACTS_FIELDS,
    SCAN_FLAGS,
    SCAN_RESULT_VERSION,
    TMPDIR_ENV,
    WORLD_SIZE_VARIABLES,
)


def env_number(names):
    """The first of `names` set to a non-negative integer, or None."""
    for name in names:
        value = number(os.environ.get(name, ""))
        if value is not None:
            return value
    return None


def number(value):
    """A launcher variable's value as a number: digits only (no sign), blanks around ignored."""
    value = value.strip()
    if value.isascii() and value.isdigit() and int(value) < 2**32:
        return int(value)
    return None


def rank():
    return env_number(RANK_VARIABLES)


def file_name_host(name):
    """A host name as a file-name part: ASCII letters, digits, -, _ and . kept, anything
    else _; "host" when empty."""
    cleaned = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "_" for c in name)
    return cleaned or "host"


# --- The GuardError's text, which `explain` reads back from a log -----------------------
# (src/contract.rs `guard_text`; tests/contract.rs checks both sides rule by rule, and
# tests/python/test_guard_text.py reads back a real GuardError of every cause.)
#
#   assertscope.GuardError: error[target-out-of-range]: class target out of range in cross_entropy
#     --> train.py:32:13
#      |
#   32 |             loss = criterion(model(x), y)
#      |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ in `main`
#      |
#      = found: 9 of 64 targets outside [0, 5) (C = 5, ignore_index = -100): 5 at [11], 5 at [12],
#               ... (7 more)
#      = target: tensor[64] i64 cpu min=1 max=5
#
# The first line is headline(); under `assertscope run` it is the whole message, followed by
# REPORTED_BY_RUN. The `= found:` note starts with count_phrase(), then interval(), then the
# sizes it was judged by (`name = value`, in brackets), then positions_text(); a shape is
# stated as `name of shape [a, b]`, and each tensor line starts with `tensor[a, b]`.

def headline(cause, title):
    return f"error[{cause}]: {title}"


def title_with_op(title, op):
    """A guard diagnosis' title: the cause's title and the op that refused the value."""
    return f"{title} in {op}"


def count_phrase(bad, total, noun):
    return f"{bad} of {total} {noun}"


def interval(low, high):
    return f"[{low}, {high})" if high is not None else f">= {low}"


def sizes_text(sizes):
    """`C = 5, ignore_index = -100` of [(name, value)]."""
    return ", ".join(f"{name} = {value}" for name, value in sizes)


def positions_text(values, positions, count):
    """`5 at [11], 5 at [12], ... (7 more)`: the first bad values, where they sit, and how
    many more there are."""
    parts = []
    for value, position in zip(values, positions):
        where = f" at [{', '.join(str(p) for p in position)}]" if position else ""
        parts.append(f"{readable_number(value)}{where}")
    more = f", ... ({count - len(parts)} more)" if count > len(parts) else ""
    return ", ".join(parts) + more


def readable_number(value):
    """A number as a person reads it: ints exact, floats with 4 significant digits (`%.4g`);
    JSON keeps them whole."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return f"{value:.4g}"
    return str(value)
