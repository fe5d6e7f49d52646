"""Reading one bad sample again, once, with line events: `dataset[i]` (every level of the
chain runs inside it) in this process, watched by lines.watch.

What: `read(dataset, index, holds)` returns the sample, the user's lines after which a local
first held the bad value (the `observed` facts), and a note when the read was abandoned.
Safety: error path only, and the user sees no difference after it:
  * the random number generators are put back as they were (Python's `random`, NumPy's
    global state, torch's CPU and CUDA generators, and generator objects the datasets keep
    as attributes), so an augmentation that draws random numbers changes nothing;
  * the guard's checks are off during the read (the user's transform is not re-judged);
  * a read that raises, or runs past READ_SECONDS, is abandoned with a note;
  * it runs in this process only: DataLoader workers are never touched.
A dataset whose `__getitem__` has side effects (a counter, a cache) sees exactly one more call
per bad sample.
"""

import random
import sys

import torch

from ... import _frames
from . import lines

READ_SECONDS = 2.0  # a re-read still running after this is stopped at its next line


class Reread:
    __slots__ = ("sample", "observed", "note", "read")

    def __init__(self, sample=None, observed=(), note=None, read=False):
        self.sample = sample
        self.observed = list(observed)
        self.note = note
        self.read = read  # the read finished and returned `sample`


def _is_user_code(code):
    return _frames.is_user_file(code.co_filename)


def _generators(objects):
    """Generator objects kept as attributes of the datasets (plain instance attributes)."""
    found = []
    numpy = sys.modules.get("numpy")
    for obj in objects:
        for value in (vars(obj).values() if hasattr(obj, "__dict__") else ()):
            if isinstance(value, (torch.Generator, random.Random)):
                found.append(value)
            elif numpy is not None and isinstance(value, (numpy.random.Generator, numpy.random.RandomState)):
                found.append(value)
    return found


class _RandomState:
    """Every random number generator the read may draw from, saved and put back."""

    def __init__(self, objects):
        self.python = random.getstate()
        numpy = sys.modules.get("numpy")  # only when the user imported it: never import it here
        self.numpy = numpy.random.get_state() if numpy is not None else None
        self.torch = torch.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
        self.owned = []
        for generator in _generators(objects):
            if isinstance(generator, torch.Generator):
                self.owned.append((generator, generator.get_state()))
            elif isinstance(generator, random.Random):
                self.owned.append((generator, generator.getstate()))
            elif hasattr(generator, "bit_generator"):
                self.owned.append((generator, generator.bit_generator.state))
            else:
                self.owned.append((generator, generator.get_state()))

    def restore(self):
        random.setstate(self.python)
        if self.numpy is not None:
            sys.modules["numpy"].random.set_state(self.numpy)
        torch.set_rng_state(self.torch)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        for generator, state in self.owned:
            if isinstance(generator, torch.Generator):
                generator.set_state(state)
            elif isinstance(generator, random.Random):
                generator.setstate(state)
            elif hasattr(generator, "bit_generator"):
                generator.bit_generator.state = state
            else:
                generator.set_state(state)


def _watch(function, holds, objects, seconds):
    """(result, observed, abandoned, error) of `function()` watched with the random number
    generators put back after it and the guard's checks off. Never raises an Exception."""
    from .._state import Busy

    state = _RandomState(objects)
    try:
        with Busy():
            result, seen, abandoned = lines.watch(function, _is_user_code, holds, seconds)
    except Exception as error:  # noqa: BLE001 - the user's code may not run twice
        return None, [], False, error
    finally:
        state.restore()
    observed = [
        {"file": file, "line": line, "function": name_of, "name": name, "value": _plain(value)}
        for file, line, name_of, name, value in seen
    ]
    return result, observed, abandoned, None


def _raised(what, error):
    message = " ".join(str(error).split())[:160]
    return f"{what} raised {type(error).__name__}: {message}"


def read(dataset, index, holds, chain_objects=(), seconds=None):
    """One watched `dataset[index]`. `holds(value)` gives the bad value a value holds, or
    None."""
    seconds = READ_SECONDS if seconds is None else seconds
    sample, observed, abandoned, error = _watch(lambda: dataset[index], holds, [dataset, *chain_objects], seconds)
    if error is not None:
        return Reread(note=f"{_raised(f'reading dataset[{index}] again', error)}; not re-read")
    if abandoned:
        return Reread(observed=observed, note=f"reading dataset[{index}] again took over {seconds:g} s; abandoned")
    return Reread(sample, observed, read=True)


def collate(collate_fn, sample, holds, seconds=None):
    """(batch, observed, note) of the user's collate_fn run on the re-read sample alone:
    where a value the sample does not hold was made by the collate_fn."""
    seconds = READ_SECONDS if seconds is None else seconds
    batch, observed, abandoned, error = _watch(lambda: collate_fn([sample]), holds, (), seconds)
    if error is not None:
        return None, [], f"{_raised('the collate_fn, run on the re-read sample,', error)}"
    if abandoned:
        return None, observed, f"the collate_fn, run on the re-read sample, took over {seconds:g} s; abandoned"
    return batch, observed, None


def _plain(value):
    """A matched value as JSON has it (NaN and infinities as strings)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    return value
