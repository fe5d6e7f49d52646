"""From the op to the origin: the facts, gathered in the failing process, from which the
origin engine (`assertscope origin`, in Rust) proves the path of the bad value back to the
line that made it; and that path, drawn on the GuardError.

Clean runs pay for two cheap recorders only: module construction stacks (modules.py) and
the dataset indices of each DataLoader batch (loader.py). Everything else runs on the error
path, after a check failed:
  samples   bad positions -> the batch they came from -> the samples' dataset indices
  chain     Subset / ConcatDataset down to the user's dataset class, with the index at each
  reread    the bad sample read once more, watched line by line (lines.py)
  live      the user's dataset object read at the bad index, without running its code
  facts     the failing call's frames, the locals holding the tensor, the operand
  runtime   all of it as the guard report's `runtime` block
  engine    the call of `assertscope origin -` outside `run`
  attach    facts and path into the GuardError's diagnosis and message
"""

from . import loader, modules

__all__ = ["install", "uninstall"]


def install():
    modules.install()
    loader.install()


def uninstall():
    loader.uninstall()
    modules.uninstall()
