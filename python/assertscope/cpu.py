"""on_cpu(): run code written for CUDA on the CPU, unmodified (step 1 of the checklist: on the
CPU the same bad value raises a readable error instead of a device-side assert).

What it remaps, in this process, from the call on:
  * devices: "cuda", "cuda:1", torch.device("cuda"), and CUDA ordinals (0, 1, ...) passed to
    tensor factories (torch.zeros(..., device=...) & co.), Tensor.to / .cuda / .new_*,
    nn.Module.to / .cuda, torch.set_default_device, `with torch.device("cuda"):`,
    torch.Generator(device="cuda"), torch.load(map_location=...), and the legacy
    torch.cuda.FloatTensor-style types;
  * torch.cuda.is_available() answers True, so a script that branches on it takes the same
    CUDA path it takes on a GPU machine (PyTorch's compiler, torch.compile, is told the
    truth, so it generates CPU code instead of looking for Triton's CUDA driver); the torch.cuda calls such scripts make (device
    counts, names and properties, set_device, synchronize, seeds, RNG state, memory
    statistics, streams, events, nvtx ranges) answer as a one-GPU machine whose "GPU" is the
    CPU: streams and events are already complete, timings use the wall clock, memory reads 0;
  * torch.accelerator names "cuda" as the accelerator, and its stream, device and memory calls
    answer the same way. The optimizers ask it for the current stream in step() (Adam, AdamW,
    RMSprop, NAdam, ... since torch 2.6), so without this their first step reaches the CUDA
    driver. torch.Stream / torch.Event for "cuda" are the same stand-ins;
  * optimizers built with capturable=True (for CUDA-graph capture) take the plain update,
    which PyTorch refuses to run capturable on the CPU;
  * torch.autocast("cuda"), torch.cuda.amp.autocast and GradScaler("cuda") become their CPU
    versions;
  * DataLoader(pin_memory=True) does not pin; Tensor.pin_memory() is a no-op;
  * torch.distributed: the "nccl" backend becomes "gloo", DistributedDataParallel drops
    device_ids, DataParallel runs the module directly.
Call it before tensors are created. Names bound before the call (`from torch import zeros`)
keep their CUDA meaning; `assertscope run --cpu` calls on_cpu() as torch is imported.
"""

import collections
import functools
import os
import sys
import time
import types

from ._guard._patching import Patches

__all__ = ["on_cpu", "is_on_cpu", "cpu_device"]

_active = False
_CPU = None  # torch.device("cpu"), set by on_cpu() (torch is imported lazily)
# Never undone: code written for CUDA keeps running on the CPU for the rest of the process.
_patches = Patches()


def is_on_cpu():
    return _active


def cpu_device(device):
    """The CPU for anything that names a CUDA device; other devices unchanged."""
    import torch

    if device is None or isinstance(device, bool):
        return device
    if isinstance(device, torch.device):
        return torch.device("cpu") if device.type == "cuda" else device
    if isinstance(device, str):
        return "cpu" if device.split(":", 1)[0].strip() == "cuda" else device
    if isinstance(device, int):
        return "cpu"  # a bare ordinal means a CUDA device
    return device


def _wrap(owner, name, make):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__assertscope_cpu__", False):
        return
    replacement = make(original)
    try:
        functools.update_wrapper(replacement, original)
    except (AttributeError, TypeError):
        pass
    replacement.__assertscope_cpu__ = True
    _patches.replace(owner, name, replacement)


def _remapping_device_kwarg(original):
    def factory(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = cpu_device(kwargs["device"])
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        return original(*args, **kwargs)

    return factory


def _tensor_to(original):
    import torch

    def to(self, *args, **kwargs):
        if args and isinstance(args[0], (str, int, torch.device)) and not isinstance(args[0], bool):
            args = (cpu_device(args[0]),) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = cpu_device(kwargs["device"])
        return original(self, *args, **kwargs)

    return to


def _tensor_cuda(original):
    def cuda(self, device=None, non_blocking=False, memory_format=None):
        if memory_format is not None:
            return self.contiguous(memory_format=memory_format)
        return self

    return cuda


def _returning(value):
    """A replacement that ignores its arguments and answers `value` (called, if callable)."""

    def make(original):
        def replacement(*args, **kwargs):
            return value() if callable(value) else value

        return replacement

    return make


class _FakeEvent:
    """torch.cuda.Event / torch.Event on the CPU: everything is already done; timing uses the
    wall clock."""

    def __init__(self, device=None, enable_timing=False, blocking=False, interprocess=False, **_):
        self.time = None
        self.device = _CPU

    def record(self, stream=None):
        self.time = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        if self.time is None or getattr(end_event, "time", None) is None:
            # CUDA's own refusal for an event that was never recorded.
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event.time - self.time) * 1000.0


class _FakeStream:
    """torch.cuda.Stream / torch.Stream on the CPU: work is already done when it is queued,
    so waits and synchronisations return at once, and nothing is ever graph-captured."""

    def __init__(self, device=None, priority=0, **_):
        self.device = _CPU
        self.device_type = "cpu"
        self.device_index = 0
        self.priority = priority
        self.stream_id = 0
        self.cuda_stream = 0

    def synchronize(self):
        pass

    def query(self):
        return True

    def is_capturing(self):
        return False

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or _FakeEvent()
        event.record()
        return event

    def native_handle(self):
        return 0

    def __eq__(self, other):
        return isinstance(other, _FakeStream)

    def __hash__(self):
        return hash(_FakeStream)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return "<assertscope --cpu stream>"


class _NoContext:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, function):
        return function  # also usable as a decorator, like torch.cuda.device


def _cuda_or_default(original_class, fake_class):
    """A stand-in for torch.Stream / torch.Event: the fake for CUDA (or no device named), the
    real class for any other device; isinstance() accepts both."""

    class Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, (fake_class, original_class))

    class StandIn(metaclass=Meta):
        def __new__(cls, device=None, *args, **kwargs):
            if device is not None and cpu_device(device) == device:  # not a CUDA device
                return original_class(device, *args, **kwargs)
            return fake_class(device, *args, **kwargs)

    StandIn.__name__ = StandIn.__qualname__ = original_class.__name__
    StandIn.__module__ = original_class.__module__
    StandIn.__doc__ = original_class.__doc__
    return StandIn


def _properties(device=None):
    import torch

    return types.SimpleNamespace(
        name="CPU (assertscope --cpu)",
        total_memory=_total_memory(),
        # A CPU has no CUDA compute capability (and no Tensor Cores): 0.0, so that code
        # choosing kernels by capability (Lightning's TF32 advice, flash attention) takes
        # the path for a device without them.
        major=0,
        minor=0,
        multi_processor_count=os.cpu_count() or 1,
        is_integrated=False,
        is_multi_gpu_board=False,
        L2_cache_size=0,
        warp_size=32,
        max_threads_per_multi_processor=2048,
        type=torch.device("cpu"),
    )


def _total_memory():
    if hasattr(os, "sysconf"):
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            pass
    return 0


def _device_count():
    # torchrun starts one rank per "GPU"; let every local rank see its own device index.
    for name in ("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


# PyTorch's compiler stack asks whether CUDA is there to choose its code generator (Triton for
# CUDA) and its device: it must get the true answer, or torch.compile looks for a CUDA driver.
_TRUTHFUL_CALLERS = ("torch._inductor", "torch._dynamo", "torch.utils._triton", "torch._functorch", "triton")


def _compiler_is_asking(depth=2, frames=40):
    frame = sys._getframe(depth)
    while frame is not None and frames:
        if frame.f_globals.get("__name__", "").startswith(_TRUTHFUL_CALLERS):
            return True
        frame = frame.f_back
        frames -= 1
    return False


def _answer_user_code(value):
    """A replacement that answers `value()` to the script (it takes its CUDA path) and the
    truth to PyTorch's compiler."""

    def make(original):
        def replacement(*args, **kwargs):
            if _compiler_is_asking():
                return original(*args, **kwargs)
            return value()

        return replacement

    return make


def _memory_stats(*args, **kwargs):
    # Scripts index it by key ("allocated_bytes.all.peak"): every statistic reads 0.
    return collections.defaultdict(int)


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

    memory = _total_memory
    # Every torch.cuda call a training script makes, answered as a one-GPU machine whose GPU is
    # the CPU. They are replaced in torch.cuda and in the submodules that define them
    # (torch.cuda.memory, torch.cuda.random), which call each other by their own names.
    answers = {
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
    _wrap(cuda, "is_available", _answer_user_code(lambda: True))
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
    _remap_accelerator(torch, state, set_device, current_stream, set_stream)
    # torch.Stream(device="cuda") / torch.Event(device="cuda"): the generic stream API the
    # optimizers and AMP use since torch.accelerator exists.
    for name, fake in (("Stream", _FakeStream), ("Event", _FakeEvent)):
        original = getattr(torch, name, None)
        if isinstance(original, type) and not getattr(original, "__assertscope_cpu__", False):
            stand_in = _cuda_or_default(original, fake)
            stand_in.__assertscope_cpu__ = True
            _patches.replace(torch, name, stand_in)


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


def _remap_amp(torch):
    autocast_class = torch.amp.autocast_mode.autocast
    original_init = autocast_class.__init__

    def autocast_init(self, device_type, *args, **kwargs):
        original_init(self, "cpu" if device_type == "cuda" else device_type, *args, **kwargs)

    if not getattr(original_init, "__assertscope_cpu__", False):
        autocast_init.__assertscope_cpu__ = True
        autocast_class.__init__ = autocast_init

    scaler_class = torch.amp.GradScaler
    original_scaler_init = scaler_class.__init__

    def scaler_init(self, device="cuda", *args, **kwargs):
        original_scaler_init(self, "cpu" if device == "cuda" else device, *args, **kwargs)

    if not getattr(original_scaler_init, "__assertscope_cpu__", False):
        scaler_init.__assertscope_cpu__ = True
        scaler_class.__init__ = scaler_init


def _remap_data_and_io(torch):
    from torch.utils.data import DataLoader

    original_init = DataLoader.__init__

    def loader_init(self, *args, **kwargs):
        kwargs["pin_memory"] = False
        kwargs.pop("pin_memory_device", None)
        if len(args) > 7:  # pin_memory passed by position
            args = args[:7] + (False,) + args[8:]
        original_init(self, *args, **kwargs)

    if not getattr(original_init, "__assertscope_cpu__", False):
        loader_init.__assertscope_cpu__ = True
        DataLoader.__init__ = loader_init

    def load(original):
        def load(f, map_location=None, *args, **kwargs):
            if map_location is None or isinstance(map_location, (str, int, torch.device)):
                map_location = "cpu" if map_location is None else cpu_device(map_location)
            elif isinstance(map_location, dict):
                map_location = {k: cpu_device(v) for k, v in map_location.items()}
            return original(f, map_location, *args, **kwargs)

        return load

    _wrap(torch, "load", load)
    _wrap(torch, "set_default_device", _remapping_positional_device)


def _remap_generator_and_device_context(torch):
    """torch.Generator(device="cuda") and `with torch.device("cuda"):` (the default-device
    context, which PyTorch's C++ enters through torch.utils._device.DeviceContext)."""
    original = torch.Generator
    if not getattr(original, "__assertscope_cpu__", False):

        class Generator(original):
            __assertscope_cpu__ = True

            def __new__(cls, device="cpu"):
                return super().__new__(cls, cpu_device(device))

        Generator.__name__ = Generator.__qualname__ = "Generator"
        Generator.__module__ = original.__module__
        Generator.__doc__ = original.__doc__
        torch.Generator = Generator

    try:
        from torch.utils._device import DeviceContext
    except ImportError:
        return
    context_init = DeviceContext.__init__

    def init(self, device):
        context_init(self, cpu_device(device))

    if not getattr(context_init, "__assertscope_cpu__", False):
        init.__assertscope_cpu__ = True
        DeviceContext.__init__ = init


def _remap_optimizers(torch):
    """capturable=True (Adam & co. ready for CUDA-graph capture) is refused for CPU parameters;
    on the CPU nothing is captured, and the plain update computes the same step."""
    optimizer = torch.optim.Optimizer
    add_param_group = optimizer.add_param_group

    def add(self, param_group):
        add_param_group(self, param_group)
        for group in (self.param_groups[-1], self.defaults):
            if group.get("capturable"):
                group["capturable"] = False

    if not getattr(add_param_group, "__assertscope_cpu__", False):
        functools.update_wrapper(add, add_param_group)
        add.__assertscope_cpu__ = True
        optimizer.add_param_group = add


def _remapping_positional_device(original):
    def set_default_device(device):
        return original(cpu_device(device))

    return set_default_device


def _remap_distributed(torch):
    import torch.distributed as dist

    if not dist.is_available():
        return

    def init_process_group(original):
        def init_process_group(backend=None, *args, **kwargs):
            if isinstance(backend, str) and "nccl" in backend:
                backend = "gloo"
            kwargs.pop("device_id", None)
            return original(backend, *args, **kwargs)

        return init_process_group

    _wrap(dist, "init_process_group", init_process_group)

    def barrier(original):
        def barrier(*args, **kwargs):
            kwargs.pop("device_ids", None)
            return original(*args, **kwargs)

        return barrier

    _wrap(dist, "barrier", barrier)

    from torch.nn.parallel import DataParallel, DistributedDataParallel

    ddp_init = DistributedDataParallel.__init__

    def ddp(self, module, device_ids=None, output_device=None, *args, **kwargs):
        ddp_init(self, module, None, None, *args, **kwargs)

    if not getattr(ddp_init, "__assertscope_cpu__", False):
        ddp.__assertscope_cpu__ = True
        DistributedDataParallel.__init__ = ddp

    dp_init = DataParallel.__init__

    def dp(self, *args, **kwargs):
        # DataParallel runs the module directly when no GPU is available: say so for its init.
        available = torch.cuda.is_available
        torch.cuda.is_available = lambda: False
        try:
            dp_init(self, *args, **kwargs)
        finally:
            torch.cuda.is_available = available

    if not getattr(dp_init, "__assertscope_cpu__", False):
        dp.__assertscope_cpu__ = True
        DataParallel.__init__ = dp


def on_cpu():
    """Remaps CUDA to the CPU in this process (idempotent). See the module docstring."""
    global _active, _CPU
    if _active:
        return
    import torch

    _CPU = torch.device("cpu")
    constructors = set()
    try:
        from torch.utils._device import _device_constructors

        constructors = {f.__name__ for f in _device_constructors() if hasattr(torch, getattr(f, "__name__", ""))}
    except Exception:  # noqa: BLE001 - fall back to the usual factories
        pass
    constructors |= {
        "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
        "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
        "rand_like", "randn_like", "randint_like", "empty_strided", "normal", "scalar_tensor",
        "sparse_coo_tensor", "tril_indices", "triu_indices",
    }
    for name in sorted(constructors):
        if hasattr(torch, name):
            _wrap(torch, name, _remapping_device_kwarg)
    for name in ("new_tensor", "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"):
        _wrap(torch.Tensor, name, _remapping_device_kwarg)
    _wrap(torch.Tensor, "to", _tensor_to)
    _wrap(torch.Tensor, "cuda", _tensor_cuda)
    _wrap(torch.Tensor, "pin_memory", lambda original: lambda self, *args, **kwargs: self)
    _wrap(torch.Tensor, "is_pinned", _returning(False))
    _wrap(torch.Tensor, "record_stream", _returning(None))
    _remap_cuda_module(torch)
    _remap_amp(torch)
    _remap_data_and_io(torch)
    _remap_generator_and_device_context(torch)
    _remap_optimizers(torch)
    _remap_distributed(torch)
    from . import _hide  # its wrappers out of the location of warnings

    _hide.install()
    _active = True
