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

from ._cpu.cuda_module import _remap_cuda_module
from ._cpu.libraries import _remap_amp, _remap_data_and_io, _remap_distributed, _remap_generator_and_device_context, _remap_optimizers
from ._cpu.wrapping import _remapping_device_kwarg, _returning, _tensor_cuda, _tensor_to, _wrap, cpu_device

__all__ = ["on_cpu", "is_on_cpu", "cpu_device"]

_active = False


def is_on_cpu():
    return _active


def on_cpu():
    """Remaps CUDA to the CPU in this process (idempotent). See the module docstring."""
    global _active
    if _active:
        return
    import torch

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
