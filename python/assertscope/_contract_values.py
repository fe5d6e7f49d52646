"""What the package and the assertscope binary must agree on, written from src/contract.rs by
`ASSERTSCOPE_BLESS=1 cargo test --test contract` (which fails while this file differs):
do not edit it by hand. _contract.py gives these to the package."""

REPORT_DIR_ENV = "ASSERTSCOPE_REPORT_DIR"
GUARD_ENV = "ASSERTSCOPE_GUARD"
GUARD_MODE_ENV = "ASSERTSCOPE_GUARD_MODE"
CPU_ENV = "ASSERTSCOPE_CPU"
TMPDIR_ENV = "ASSERTSCOPE_TMPDIR"
RUN_ID_ENV = "ASSERTSCOPE_RUN_ID"
BIN_ENV = "ASSERTSCOPE_BIN"
RAY_RUNTIME_ENV_ENV = "RAY_RUNTIME_ENV_HOOK"
RAY_HOOK_ENV = "ASSERTSCOPE_RAY_HOOK"
RAY_RUN_ID_SUFFIX = ".ray"
RAY_RUNTIME_ENV_HOOK = "assertscope.ray.runtime_env_hook"
GUARD_MODES = ("auto", "sync", "async")
RANK_VARIABLES = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
LOCAL_RANK_VARIABLES = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
DIAGNOSIS_SCHEMA = "assertscope.diagnosis/1"
GUARD_REPORT_SCHEMA = "assertscope.guard-report/1"
GUARD_ERROR_TYPE = "assertscope.GuardError"
FOUND_NOTE = "found"
REPORTED_BY_RUN = "(assertscope run reports it when the command ends)"
SCAN_RESULT_VERSION = 3
SCAN_FACTS_FIELDS = ("version", "target", "kind", "batch_size", "num_workers", "indices", "batches", "fields", "structure", "error")
SCAN_FLAGS = {
    "out": "--out",
    "plan": "--plan",
    "label_key": "--label-key",
    "input_key": "--input-key",
    "batch_size": "--batch-size",
    "num_workers": "--num-workers",
    "max_batches": "--max-batches",
    "model": "--model",
    "no_progress": "--no-progress",
}
