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
SCAN_RESULT_VERSION = 2


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
