"""The dataset index of every sample, also with ``num_workers > 0``: the sampler is wrapped so
that the indices of every batch are recorded as they are handed to the workers."""

from __future__ import annotations

import inspect
import operator


class RecordingBatchSampler:
    """Yields the batches of the wrapped batch sampler and remembers each one's indices."""

    def __init__(self, inner, queue):
        self.inner = inner
        self.queue = queue

    def __iter__(self):
        for batch in self.inner:
            batch = list(batch)
            self.queue.append(batch)
            yield batch

    def __len__(self):
        return len(self.inner)


class RecordingSampler:
    """For loaders without automatic batching: each index is one 'batch'."""

    def __init__(self, inner, queue):
        self.inner = inner
        self.queue = queue

    def __iter__(self):
        for index in self.inner:
            self.queue.append([index])
            yield index

    def __len__(self):
        return len(self.inner)


def recording_loader(loader, queue):
    """A DataLoader equivalent to ``loader`` whose batches' dataset indices are recorded
    in ``queue``, in the order the batches are returned (also with workers), or the
    loader itself when its dataset has no indices (an IterableDataset)."""
    from torch.utils.data import DataLoader, IterableDataset

    if isinstance(loader.dataset, IterableDataset):
        return loader, False
    kwargs = dict(
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=False,
        timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context,
        generator=loader.generator,
    )
    if loader.num_workers > 0:
        kwargs["prefetch_factor"] = loader.prefetch_factor
    if "in_order" in inspect.signature(DataLoader.__init__).parameters:
        kwargs["in_order"] = True  # batch i must be the i-th recorded index list
    if loader.batch_sampler is not None:
        return DataLoader(loader.dataset, batch_sampler=RecordingBatchSampler(loader.batch_sampler, queue), **kwargs), True
    return DataLoader(loader.dataset, batch_size=None, sampler=RecordingSampler(loader.sampler, queue), **kwargs), True


# --------------------------------------------------------------------------- facts


def dataset_indices(indices):
    """The recorded indices as ints, or None when the sampler yields something else."""
    try:
        return [operator.index(i) if not hasattr(i, "item") else int(i.item()) for i in indices]
    except (TypeError, ValueError):
        return None

