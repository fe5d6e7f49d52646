"""A small training script written for a CUDA machine (used unmodified by the --cpu tests)."""

import os
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

assert torch.cuda.is_available(), "this script needs a GPU"
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.benchmark = True
torch.cuda.set_device(0)
print("device", torch.cuda.current_device(), torch.cuda.get_device_name(0), torch.cuda.device_count())

labels = torch.randint(0, int(sys.argv[1]) if len(sys.argv) > 1 else 4, (64,))
data = TensorDataset(torch.randn(64, 3, 8, 8), labels)
loader = DataLoader(data, batch_size=16, shuffle=True, pin_memory=True)

model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 64, 4)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
end.record()
torch.cuda.synchronize()
extra = torch.zeros(2, device="cuda:0") + torch.ones(2, device=device).new_ones(2)
path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(model.state_dict(), path)
model.load_state_dict(torch.load(path, map_location="cuda"))
print("peak memory", torch.cuda.max_memory_allocated(), "time", start.elapsed_time(end) >= 0)
print("ok", loss.item() > 0, extra.tolist())
