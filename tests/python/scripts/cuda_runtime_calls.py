"""The torch.cuda runtime calls training and benchmarking scripts make around their loop:
streams (a side stream prefetching the next batch), events (timing), memory statistics,
synchronisation, generators, pinned memory, the torch.Stream/torch.Event and
torch.accelerator APIs, and `with torch.device("cuda")`."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

assert torch.cuda.is_available(), "this script needs a GPU"
local_rank = 0
torch.cuda.set_device(local_rank)
device = torch.device("cuda", local_rank)
print("gpu", torch.cuda.get_device_name(device), torch.cuda.get_device_capability(device),
      torch.cuda.get_device_properties(device).total_memory > 0, torch.cuda.is_bf16_supported())
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

generator = torch.Generator(device="cuda")
generator.manual_seed(1234)
noise = torch.randn(4, device="cuda", generator=generator)

data = TensorDataset(torch.randn(48, 8), torch.randint(0, 4, (48,)))
loader = DataLoader(data, batch_size=16, pin_memory=True, pin_memory_device="cuda", num_workers=2)

with torch.device("cuda"):
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

side = torch.cuda.Stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.reset_peak_memory_stats()
torch.cuda.empty_cache()
start.record()
for x, y in loader:
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x = x.pin_memory().to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    x.record_stream(torch.cuda.current_stream())
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
end.record()
end.synchronize()
torch.cuda.synchronize()
elapsed_ms = start.elapsed_time(end)

stream = torch.Stream(device="cuda")
event = torch.Event(device="cuda", enable_timing=True)
event.record(stream)
stream.synchronize()
torch.accelerator.synchronize()
if torch.accelerator.current_accelerator().type == "cuda":
    torch.accelerator.current_stream().synchronize()

stats = torch.cuda.memory_stats()
free, total = torch.cuda.mem_get_info()
print("memory", torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(device), torch.cuda.memory_reserved(),
      stats["allocated_bytes.all.peak"], free <= total)
print(torch.cuda.memory_summary(device=device, abbreviated=True).splitlines()[0])
state = torch.cuda.get_rng_state()
torch.cuda.set_rng_state(state)
print("ok", elapsed_ms >= 0, loss.device, noise.device, torch.cuda.current_device())
