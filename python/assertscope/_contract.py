"""What the package and the assertscope binary must agree on, as the binary defines it in
src/contract.rs (its tests/contract.rs checks this copy value by value and rule by rule)."""

import os

# Environment variables the binary sets for the processes it starts.
REPORT_DIR_ENV = "ASSERTSCOPE_REPORT_DIR"
GUARD_ENV = "ASSERTSCOPE_GUARD"
GUARD_MODE_ENV = "ASSERTSCOPE_GUARD_MODE"
CPU_ENV = "ASSERTSCOPE_CPU"
TMPDIR_ENV = "ASSERTSCOPE_TMPDIR"
RUN_ID_ENV = "ASSERTSCOPE_RUN_ID"
# The assertscope binary itself: the guard calls its `origin` command on the error path.
BIN_ENV = "ASSERTSCOPE_BIN"
RAY_RUNTIME_ENV_ENV = "RAY_RUNTIME_ENV_HOOK"
RAY_HOOK_ENV = "ASSERTSCOPE_RAY_HOOK"

# Added to the run id of Ray workers' reports: Ray ends or retries a job whose worker failed,
# so `run` reads their reports but never stops the job for them.
RAY_RUN_ID_SUFFIX = ".ray"

# The function RAY_RUNTIME_ENV_HOOK names (assertscope.ray).
RAY_RUNTIME_ENV_HOOK = "assertscope.ray.runtime_env_hook"

# The guard's modes; the first is the default.
GUARD_MODES = ("auto", "sync", "async")

# Launcher variables, in order of preference: torchrun / accelerate, Slurm, Open MPI, MPICH.
RANK_VARIABLES = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
LOCAL_RANK_VARIABLES = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")

# The version of the facts document `python -m assertscope.scan` writes.
SCAN_RESULT_VERSION = 3


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

GUARD_ERROR_TYPE = "assertscope.GuardError"
FOUND_NOTE = "found"
REPORTED_BY_RUN = "(assertscope run reports it when the command ends)"


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
