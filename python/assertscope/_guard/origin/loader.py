"""DataLoader provenance: which dataset samples a batch was made of.

What: each batch a DataLoader iterator yields is recorded with the dataset indices its
sampler chose (in the main process, so `num_workers > 0`, shuffling and custom batch samplers
are covered), its step in the epoch, the collate function, and weak references to the
tensors it holds.
Why: on failure, a bad entry's position inside the batch maps through these indices to
`dataset[i]`, which can be read again (and traced) to show the user's line that made it.
Cost: per batch, a list of indices and a few weak references; nothing per op.
"""

import collections
import weakref

import torch

from ... import _frames
from .._patching import Patches
from .facts import mapping_items

RECENT = 4  # batches remembered (the failing one may surface a step later in async mode)

_recent = collections.deque(maxlen=RECENT)
_patches = Patches()


_loader_sites = weakref.WeakKeyDictionary()  # DataLoader -> (file, line, function) of its construction


class BatchRecord:
    __slots__ = ("dataset", "indices", "collate_fn", "step", "steps", "leaves", "loader", "site", "resolved", "__weakref__")

    def __init__(self, dataset, indices, collate_fn, step, steps, leaves, loader=None, site=None):
        self.resolved = False
        self.loader = loader
        self.site = site
        self.dataset = dataset
        self.indices = indices
        self.collate_fn = collate_fn
        self.step = step
        self.steps = steps
        self.leaves = leaves

    def resolve(self):
        """Error path: the sampler's index as a list of ints, the epoch's number of batches
        (`steps` holds the sampler until then)."""
        if self.resolved:
            return
        self.resolved = True
        self.indices = _as_list(self.indices) if self.indices is not None else None
        try:
            self.steps = len(self.steps)
        except TypeError:
            self.steps = None

    def live_leaves(self):
        """[(path, tensor)] of the batch's tensors still alive."""
        return [(path, t) for path, t in ((path, ref()) for path, ref in self.leaves) if t is not None]


def _leaves(data, depth=0, path=()):
    """[(path, weak reference)] of the tensors a batch holds: `path` is the keys and
    positions that reach one (`("labels",)`, `(1,)`). Any Mapping counts, not dict alone:
    transformers' BatchEncoding, the batch of its collators and of most HF pipelines, is a
    UserDict."""
    if isinstance(data, torch.Tensor):
        return [(path, weakref.ref(data))]
    if depth >= 2:
        return []
    if isinstance(data, (list, tuple)):
        items = enumerate(data[:64])
    elif type(data) is dict:
        items = list(data.items())[:64]
    else:
        items = mapping_items(data)
        if items is None:
            return []
        items = items[:64]
    found = []
    for key, item in items:
        if isinstance(item, torch.Tensor):
            found.append(((*path, key), weakref.ref(item)))
        elif depth < 1:
            found += _leaves(item, depth + 1, (*path, key))
    return found


def _as_list(index):
    if isinstance(index, (list, tuple)):
        return [int(i) for i in index] if all(isinstance(i, int) for i in index) else None
    if isinstance(index, int):
        return [index]
    if isinstance(index, torch.Tensor) and index.dim() <= 1 and not index.is_floating_point():
        return [int(i) for i in index.reshape(-1).tolist()]
    return None


def install():
    if _patches:
        return
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    next_index, next_batch = base._next_index, base.__next__

    def _next_index(self):
        index = next_index(self)
        sent = getattr(self, "_send_idx", None)
        if sent is None:
            self._assertscope_index = index
        else:
            self.__dict__.setdefault("_assertscope_sent", {})[sent] = index
        return index

    def __next__(self):
        data = next_batch(self)
        try:
            _record(self, data)
        except Exception:  # noqa: BLE001 - provenance is a courtesy; never break a loader
            pass
        return data

    iterator_init, loader_init = base.__init__, dataloader.DataLoader.__init__

    def iterator__init__(self, loader, *args, **kwargs):
        iterator_init(self, loader, *args, **kwargs)
        self._assertscope_loader = weakref.ref(loader)
        # The site, not only the loader: `for x in DataLoader(...)` drops the loader itself.
        self._assertscope_site = _loader_sites.get(loader)

    def loader__init__(self, *args, **kwargs):
        loader_init(self, *args, **kwargs)
        site = _frames.capture()
        if site is not None:
            _loader_sites[self] = site

    for owner, name, wrapper in (
        (base, "_next_index", _next_index),
        (base, "__next__", __next__),
        (base, "__init__", iterator__init__),
        (dataloader.DataLoader, "__init__", loader__init__),
    ):
        wrapper.__wrapped__ = getattr(owner, name)
        _patches.replace(owner, name, wrapper)


def uninstall():
    _patches.undo()


def _record(iterator, data):
    if getattr(iterator, "_dataset_kind", None) != 0:  # _DatasetKind.Map only: an iterable has no indices
        return
    sent = iterator.__dict__.get("_assertscope_sent")
    if sent is None:
        index = iterator.__dict__.get("_assertscope_index")
    elif not getattr(iterator, "_in_order", True):
        index = None
    else:
        received = iterator._rcvd_idx - 1
        index = sent.pop(received, None)
        for stale in [k for k in sent if k < received]:
            del sent[stale]
    if index is None:
        return
    # Raw: the indices are made a list, and the epoch's length read, on the error path only.
    _recent.append(
        BatchRecord(
            iterator._dataset,
            index,
            iterator._collate_fn if iterator._auto_collation else None,
            iterator._num_yielded,
            iterator._index_sampler,
            _leaves(data),
            iterator.__dict__.get("_assertscope_loader"),
            iterator.__dict__.get("_assertscope_site"),
        )
    )


def loader_site(record):
    """(loader or None when it is gone, (file, line, function)) of the DataLoader a batch
    came from, when its construction was seen."""
    loader = record.loader() if record.loader is not None else None
    return (loader, record.site) if record.site is not None else None


def _is_fetch(frame):
    code = frame.f_code
    return code.co_name == "fetch" and code.co_filename.replace("\\", "/").endswith("torch/utils/data/_utils/fetch.py")


def fetching(start, subject):
    """The batch a DataLoader is building on the stack from `start` outwards (a failure
    inside the collate_fn, in this process: `num_workers=0`), as a record of the one sample
    whose tensors hold the subject's memory, else None. The sampler's indices and the
    samples are the fetch's own locals, read without running anything."""
    from . import samples

    frame = start
    while frame is not None and not _is_fetch(frame):
        frame = frame.f_back
    if frame is None:
        return None
    fetcher, index, data = (frame.f_locals.get(name) for name in ("self", "possibly_batched_index", "data"))
    pointer = samples.storage_of(subject)
    if fetcher is None or not pointer or not isinstance(data, list) or not fetcher.auto_collation:
        return None
    index = _as_list(index)
    if index is None or len(index) != len(data):
        return None
    iterator = frame.f_back.f_locals.get("self") if frame.f_back is not None else None
    step = getattr(iterator, "_num_yielded", None)
    sampler = getattr(iterator, "_index_sampler", None)
    for slot, sample in enumerate(data):
        leaves = _leaves(sample)
        if any(samples.storage_of(ref()) == pointer for _, ref in leaves if ref() is not None):
            record = BatchRecord(
                fetcher.dataset,
                [index[slot]],
                fetcher.collate_fn,
                step + 1 if isinstance(step, int) else None,
                sampler,
                leaves,
                iterator.__dict__.get("_assertscope_loader") if iterator is not None else None,
                iterator.__dict__.get("_assertscope_site") if iterator is not None else None,
            )
            record.resolve()
            return record
    return None


def recent():
    """The batches yielded last, newest first, resolved; batches without int indices are
    left out."""
    found = []
    for record in reversed(_recent):
        record.resolve()
        if record.indices:
            found.append(record)
    return found


def forget():
    _recent.clear()
