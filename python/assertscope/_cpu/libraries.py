"""The CUDA paths of the libraries around the tensor: autocast and GradScaler, DataLoader and
torch.load, generators and device contexts, optimizers, torch.distributed."""

import functools

from .wrapping import _remapping_positional_device, _wrap, cpu_device

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

