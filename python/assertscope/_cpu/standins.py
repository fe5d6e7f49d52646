"""What the CPU answers in CUDA's place: streams and events already complete, the properties
and memory of a one-GPU machine, and the truth for PyTorch's compiler."""

import collections
import os
import sys
import time
import types

from .wrapping import cpu_device


def _cpu():
    import torch

    return torch.device("cpu")


class _FakeEvent:
    """torch.cuda.Event / torch.Event on the CPU: everything is already done; timing uses the
    wall clock."""

    def __init__(self, device=None, enable_timing=False, blocking=False, interprocess=False, **_):
        self.time = None
        self.device = _cpu()

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
        self.device = _cpu()
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

