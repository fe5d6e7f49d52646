"""torch.cuda and torch.accelerator answering as a one-GPU machine whose GPU is the CPU."""

from .standins import _FakeEvent, _FakeStream, _NoContext, _answer_user_code, _cuda_or_default, _device_count, _memory_stats, _properties, _total_memory
from .wrapping import _patches, _returning, _wrap

_CUDA_MODULES = ("torch.cuda", "torch.cuda.memory", "torch.cuda.random", "torch.cuda.streams", "torch.cuda.nvtx")
_ACCELERATOR_MODULES = ("torch.accelerator", "torch.accelerator.memory", "torch.accelerator.random")


def _modules(names):
    import importlib

    found = []
    for name in names:
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            pass
    return found


def _remap_cuda_module(torch):
    cuda = torch.cuda
    state = {"device": 0, "stream": None}

    def set_device(device):
        if isinstance(device, torch.device):
            state["device"] = device.index or 0
        elif isinstance(device, str):
            state["device"] = int(device.split(":", 1)[1]) if ":" in device else 0
        elif isinstance(device, int):
            state["device"] = device

    def current_stream(*args, **kwargs):
        return state["stream"] or _FakeStream()

    def set_stream(stream):
        state["stream"] = stream if isinstance(stream, _FakeStream) else None

    _answer_cuda_calls(torch, _cuda_answers(torch, state, current_stream), set_device, set_stream)
    _replace_cuda_classes(torch, cuda)
    _remap_accelerator(torch, state, set_device, current_stream, set_stream)
    # torch.Stream(device="cuda") / torch.Event(device="cuda"): the generic stream API the
    # optimizers and AMP use since torch.accelerator exists.
    for name, fake in (("Stream", _FakeStream), ("Event", _FakeEvent)):
        original = getattr(torch, name, None)
        if isinstance(original, type) and not getattr(original, "__assertscope_cpu__", False):
            stand_in = _cuda_or_default(original, fake)
            stand_in.__assertscope_cpu__ = True
            _patches.replace(torch, name, stand_in)


def _cuda_answers(torch, state, current_stream):
    """Every torch.cuda call a training script makes, answered as a one-GPU machine whose GPU is
    the CPU: a value, a function, or None for a call that does nothing."""
    memory = _total_memory
    return {
        "is_initialized": True,
        "current_device": lambda: state["device"],
        "get_device_name": "CPU (assertscope --cpu)",
        "get_device_capability": (0, 0),
        "get_device_properties": _properties,
        "get_arch_list": lambda: [],
        "is_bf16_supported": True,
        "is_tf32_supported": False,
        "synchronize": None,
        "init": None,
        "empty_cache": None,
        "ipc_collect": None,
        "manual_seed": None,
        "manual_seed_all": None,
        "seed": None,
        "seed_all": None,
        "initial_seed": lambda: torch.initial_seed(),
        "get_rng_state": lambda: torch.get_rng_state(),
        "get_rng_state_all": lambda: [torch.get_rng_state() for _ in range(_device_count())],
        "set_rng_state": None,
        "set_rng_state_all": None,
        "memory_allocated": 0,
        "max_memory_allocated": 0,
        "memory_reserved": 0,
        "max_memory_reserved": 0,
        "memory_cached": 0,
        "max_memory_cached": 0,
        "device_memory_used": 0,
        "reset_peak_memory_stats": None,
        "reset_max_memory_allocated": None,
        "reset_max_memory_cached": None,
        "reset_accumulated_memory_stats": None,
        "memory_stats": _memory_stats,
        "memory_stats_as_nested_dict": lambda: {},
        "memory_snapshot": lambda: [],
        "memory_summary": "assertscope --cpu: no CUDA memory is used",
        "list_gpu_processes": "assertscope --cpu: no GPU processes",
        "mem_get_info": lambda: (memory(), memory()),
        "set_per_process_memory_fraction": None,
        "get_per_process_memory_fraction": 1.0,
        "utilization": 0,
        "memory_usage": 0,
        "temperature": 0,
        "power_draw": 0,
        "clock_rate": 0,
        "current_stream": current_stream,
        "default_stream": lambda: _FakeStream(),
        "is_current_stream_capturing": False,
        "can_device_access_peer": True,
        "range_push": None,
        "range_pop": None,
        "mark": None,
    }


def _answer_cuda_calls(torch, answers, set_device, set_stream):
    """Replaces the calls in torch.cuda and in the submodules that define them (torch.cuda.memory,
    torch.cuda.random), which call each other by their own names."""
    _wrap(torch.cuda, "is_available", _answer_user_code(lambda: True))
    for module in _modules(_CUDA_MODULES):
        for name, value in answers.items():
            if name in vars(module):
                _wrap(module, name, _returning(value))
        if "device_count" in vars(module):
            # With PYTORCH_NVML_BASED_CUDA_CHECK=1 (lightning sets it) the real is_available()
            # the compiler gets asks device_count(): it must hear the truth as well.
            _wrap(module, "device_count", _answer_user_code(_device_count))
        for name, function in (("set_device", set_device), ("set_stream", set_stream)):
            if name in vars(module):
                _wrap(module, name, lambda original, function=function: function)
        if "range" in vars(module) and module.__name__ == "torch.cuda.nvtx":
            _patches.replace(module, "range", _NoContext)


def _replace_cuda_classes(torch, cuda):
    """torch.cuda's streams, events, device contexts, generators and legacy tensor types."""
    for name, replacement in (
        ("Event", _FakeEvent),
        ("Stream", _FakeStream),
        ("ExternalStream", _FakeStream),
        ("device", _NoContext),
        ("stream", _NoContext),
        ("device_of", _NoContext),
    ):
        if hasattr(cuda, name):
            _patches.replace(cuda, name, replacement)
    # torch.Generator(device="cuda") & co. draw from the CPU generator.
    cuda.default_generators = (torch.default_generator,) * _device_count()
    for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool"):
        name = f"{kind}Tensor"
        if hasattr(cuda, name) and hasattr(torch, name):
            _patches.replace(cuda, name, getattr(torch, name))


def _remap_accelerator(torch, state, set_device, current_stream, set_stream):
    """torch.accelerator (torch >= 2.6) names "cuda" as the machine's accelerator; the optimizers
    (Adam, AdamW, RMSprop, ...) ask it for the current stream in step(), so its stream, memory
    and device calls must answer too, or the first step() reaches the CUDA driver."""
    if getattr(torch, "accelerator", None) is None:
        return
    memory = _total_memory
    answers = {
        "device_count": _device_count,
        "current_device_index": lambda: state["device"],
        "current_device_idx": lambda: state["device"],
        "get_device_capability": lambda *args: {"major": 0, "minor": 0},
        "current_stream": current_stream,
        "synchronize": None,
        "empty_cache": None,
        "empty_host_cache": None,
        "memory_stats": _memory_stats,
        "memory_allocated": 0,
        "max_memory_allocated": 0,
        "memory_reserved": 0,
        "max_memory_reserved": 0,
        "reset_accumulated_memory_stats": None,
        "reset_peak_memory_stats": None,
        "get_memory_info": lambda *args: (memory(), memory()),
    }
    _wrap(torch.accelerator, "is_available", _answer_user_code(lambda: True))
    _wrap(torch.accelerator, "current_accelerator", _answer_user_code(lambda: torch.device("cuda")))
    for module in _modules(_ACCELERATOR_MODULES):
        for name, value in answers.items():
            if name in vars(module):
                _wrap(module, name, _returning(value))
        for name, function in (("set_device_index", set_device), ("set_device_idx", set_device), ("set_stream", set_stream)):
            if name in vars(module):
                _wrap(module, name, lambda original, function=function: function)
        if isinstance(vars(module).get("device_index"), type):
            module.device_index = _NoContext


