"""Guard reports for `assertscope run`: one JSON file per GuardError, written to
$ASSERTSCOPE_REPORT_DIR as guard-<host>-<pid>-<n>.json (temp file + rename, so a reader
never sees half a file).
"""

import itertools
import json
import os
import socket
import sys
import time

from . import _contract

SCHEMA = "assertscope.guard-report/1"
REPORT_DIR_ENV = _contract.REPORT_DIR_ENV

_counter = itertools.count(1)



def report(diagnosis):
    """The guard-report object for a diagnosis, with this process's identity."""
    return {
        "schema": SCHEMA,
        "time": time.time(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "rank": _contract.env_number(_contract.RANK_VARIABLES),
        "local_rank": _contract.env_number(_contract.LOCAL_RANK_VARIABLES),
        "world_size": _contract.env_number(_contract.WORLD_SIZE_VARIABLES),
        "argv": list(sys.argv),
        "diagnosis": diagnosis,
    }


def write(diagnosis, directory=None):
    """Writes a report when a report directory is set; returns its path or None. Never raises."""
    directory = directory or os.environ.get(REPORT_DIR_ENV)
    if not directory or diagnosis is None:
        return None
    try:
        host = _contract.file_name_host(socket.gethostname())
        name = f"guard-{host}-{os.getpid()}-{next(_counter)}.json"
        path = os.path.join(directory, name)
        temp = os.path.join(directory, f".{name}.tmp")
        with open(temp, "w", encoding="utf-8") as f:
            json.dump(report(diagnosis), f, indent=2, allow_nan=False)
            f.write("\n")
        os.replace(temp, path)
        return path
    except Exception as exc:  # noqa: BLE001 - the user's error matters more than our report
        sys.stderr.write(f"assertscope: could not write the guard report to {directory}: {exc}\n")
        return None
