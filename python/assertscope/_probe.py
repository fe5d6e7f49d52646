"""Environment probe for `assertscope doctor`: prints one JSON object describing this
Python, its torch and the GPUs torch sees. Standard library only; torch is optional."""

import json
import os
import platform
import sys

ENV_VARS = (
    "CUDA_LAUNCH_BLOCKING",
    "PYTORCH_USE_CUDA_DSA",
    "TORCH_USE_CUDA_DSA",
    "TORCH_SHOW_CPP_STACKTRACES",
    "CUDA_VISIBLE_DEVICES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "NCCL_DEBUG",
    "TORCH_DISTRIBUTED_DEBUG",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "OMP_NUM_THREADS",
)


def torch_info():
    try:
        import torch
    except ImportError as exc:
        return {"installed": False, "error": f"{exc.__class__.__name__}: {exc}"}
    except Exception as exc:  # a broken install raises all sorts of errors at import
        return {"installed": False, "error": f"import torch failed: {exc.__class__.__name__}: {exc}"}
    info = {
        "installed": True,
        "version": torch.__version__,
        "file": getattr(torch, "__file__", None),
        "cuda_build": getattr(torch.version, "cuda", None),
        "hip_build": getattr(torch.version, "hip", None),
        "debug_build": bool(getattr(torch.version, "debug", False)),
        "cudnn": None,
        "cuda_available": False,
        "devices": [],
        "arch_list": [],
    }
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        pass
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            info["arch_list"] = list(torch.cuda.get_arch_list())
            for i in range(torch.cuda.device_count()):
                props = torch.cuda.get_device_properties(i)
                info["devices"].append({
                    "index": i,
                    "name": props.name,
                    "capability": f"{props.major}.{props.minor}",
                    "memory_gib": round(props.total_memory / 2**30, 1),
                })
    except Exception as exc:
        info["cuda_error"] = f"{exc.__class__.__name__}: {exc}"
    return info


def guard_info():
    """Whether `assertscope run`'s start-up hook ran in this process and armed the guard."""
    hook = sys.modules.get("assertscope._inject.sitecustomize")
    info = {"hook_ran": hook is not None}
    try:
        import assertscope

        info["package"] = os.path.dirname(assertscope.__file__)
        info["version"] = getattr(assertscope, "__version__", None)
        if "torch" in sys.modules:
            info["guarded"] = bool(assertscope.is_guarded())
    except Exception as exc:
        info["error"] = f"{exc.__class__.__name__}: {exc}"
    return info


def main():
    report = {
        "python": {
            "executable": sys.executable,
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
        },
        "torch": torch_info(),
        "env": {name: os.environ.get(name) for name in ENV_VARS},
        "guard": guard_info(),
    }
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
