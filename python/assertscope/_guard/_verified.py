"""Index tensors whose range is already known, so that an `edge_index` reused by every
layer of a GNN is read once per change instead of once per call.

What: the lowest and highest value a range rule found in a tensor (or, in the asynchronous
mode, the bounds its device-side check confirmed once the verdict came back clean) are
remembered on the tensor's storage object, under the exact region the rule read (data
pointer, shape, strides, dtype) and the tensor's version counter at that moment. A later
rule on the same region at the same version, whose bounds contain the remembered range,
passes without reading the device.
Why: a check costs one reduction and two reads (or, asynchronously, several kernels); a
cache hit costs a handful of attribute reads and no kernel, so the fixed cost of a guarded
call on a reused index tensor drops below that of the op itself.

When a remembered range is trusted, and why that is safe:
  * PyTorch bumps a tensor's version counter on every write through it or any of its views
    (in-place ops, `out=`, `x[i] = v`, under no_grad and inference_mode alike), so a changed
    tensor misses;
  * the entries live on the storage object and die with it: memory freed and reused for a
    new tensor at the same address is a different storage with no entries;
  * writes that bypass the version counter are either refused up front or seen as they
    become possible, and the storage is then never cached again:
      - inference tensors keep no version counter: never cached;
      - storages PyTorch did not allocate itself (torch.from_numpy, torch.frombuffer,
        torch.from_dlpack, CUDA IPC: not resizable) and shared CPU memory (another process
        may write it): never cached;
      - `.data` (an alias with a counter of its own), `.numpy()` / `__array__`, DLPack and
        `__cuda_array_interface__` exports and `set_` onto another tensor's storage mark the
        storage "exposed" while the guard is on.
What it cannot see: aliases of those kinds made before the guard was switched on (with
`assertscope run` it is on before user code runs) and writes through raw pointers
(`data_ptr()` with ctypes, a custom kernel that does not bump the version).
ASSERTSCOPE_GUARD_CACHE=0 switches the cache off.
"""

import os
import weakref

import torch

__all__ = ["region", "known_ranges", "known_ranges_of", "ranges_of", "remember", "expose", "enabled", "INDEX_DTYPES"]

enabled = os.environ.get("ASSERTSCOPE_GUARD_CACHE", "1") != "0"

_ATTRIBUTE = "_assertscope_ranges"
_EXPOSED = "exposed"  # the attribute's value for a storage that is never cached
_MAX_REGIONS = 16  # regions remembered per storage (views of one buffer); more: start again
_MAX_TENSORS = 4096  # tensor objects remembered by identity; more: start again

# id(tensor) -> (weak reference, version, data_ptr, facts): the fast lookup for a tensor
# object used again (an edge_index, a label tensor). `facts` is the same dict as its storage
# region's, so exposing the storage (which empties every facts dict) reaches it too.
_by_identity = {}

_UNCACHED = None  # region() of a tensor whose range is never remembered

INDEX_DTYPES = frozenset(
    getattr(torch, name)
    for name in ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
    if hasattr(torch, name)
)


def region(tensor):
    """(storage, key, version) of an integer tensor whose range may be remembered, else
    _UNCACHED. Reading `_version` first: an inference tensor refuses it, and is never cached.
    """
    if not enabled or tensor.dtype not in INDEX_DTYPES:
        return _UNCACHED
    try:
        version = tensor._version
        storage = tensor.untyped_storage()
        key = (tensor.data_ptr(), tensor.shape, tensor.stride(), tensor.dtype)
    except (RuntimeError, NotImplementedError):  # inference or storage-less tensors
        return _UNCACHED
    return storage, key, version, tensor


def known_ranges_of(value):
    """known_ranges() of a tensor object seen before, found by identity (cheapest), or None.

    The same Python object, at the same version and data pointer, reads the same region:
    every in-place change of its shape or strides bumps the version, and `.data = ...`
    (which does not) forgets the object (see alias_patches).
    """
    entry = _by_identity.get(id(value))
    if entry is None or entry[0]() is not value:
        return None
    if value._version != entry[1] or value.data_ptr() != entry[2]:
        return None
    return entry[3]


def ranges_of(value):
    """known_ranges() of any value: by identity, else by storage region (a new view object
    of a buffer read before, as `labels.unsqueeze(1)` or `edges[0]` make every call)."""
    if not enabled:
        return None
    entry = _by_identity.get(id(value))
    if entry is not None and entry[0]() is value and value._version == entry[1] and value.data_ptr() == entry[2]:
        return entry[3]  # (known_ranges_of, inlined: this is the hot path of every guarded call)
    if not isinstance(value, torch.Tensor):
        return None
    try:
        regions = getattr(value.untyped_storage(), _ATTRIBUTE, None)
    except (RuntimeError, NotImplementedError):
        return None
    if regions is None or regions is _EXPOSED:
        return None  # (a fresh tensor: no key to build)
    try:
        entry = regions.get((value.data_ptr(), value.shape, value.stride(), value.dtype))
        return entry[1] if entry is not None and entry[0] == value._version else None
    except RuntimeError:  # an inference tensor (no version counter) on a storage read before
        return None


def forget(tensor):
    _by_identity.pop(id(tensor), None)


def known_ranges(found):
    """{ignored value or None: (low, high)} remembered for `found` (from region()) at its
    version, or None."""
    storage, key, version, _ = found
    regions = getattr(storage, _ATTRIBUTE, None)
    if regions is None or regions is _EXPOSED:
        return None
    entry = regions.get(key)
    if entry is None or entry[0] != version:
        return None
    return entry[1]


def remember(found, low, high, ignore=None):
    """Remembers that the values of the region `found` lie in [low, high] (ignoring the
    value `ignore`, when given) at its version."""
    if found is _UNCACHED:
        return
    storage, key, version, tensor = found
    regions = getattr(storage, _ATTRIBUTE, None)
    if regions is _EXPOSED:
        return
    # Asked at every store, not once per storage: share_memory_() moves a storage read
    # before into shared memory, where another process may write it.
    if not _writes_are_versioned(storage):
        expose(storage)
        return
    if regions is None:
        try:
            regions = {}
            setattr(storage, _ATTRIBUTE, regions)
        except (AttributeError, TypeError):  # a storage type that takes no attributes
            return
    entry = regions.get(key)
    if entry is None or entry[0] != version:
        if len(regions) >= _MAX_REGIONS:
            regions.clear()
        entry = regions[key] = (version, {})
    entry[1][ignore] = (low, high)
    if len(_by_identity) >= _MAX_TENSORS:
        _by_identity.clear()
    _by_identity[id(tensor)] = (weakref.ref(tensor), version, key[0], entry[1])


def expose(value):
    """Marks the storage of a tensor (or a storage) as writable without a version bump:
    nothing in it is trusted from now on."""
    try:
        storage = value if isinstance(value, torch.UntypedStorage) else value.untyped_storage()
        regions = getattr(storage, _ATTRIBUTE, None)
        setattr(storage, _ATTRIBUTE, _EXPOSED)  # first: no new entry can land after this
    except Exception:  # noqa: BLE001 - a tensor without storage holds nothing to forget
        return
    if isinstance(regions, dict):
        for _, facts in list(regions.values()):
            facts.clear()  # the identity entries share these dicts


def _writes_are_versioned(storage):
    """Memory PyTorch allocated itself and only this process writes."""
    if not storage.resizable():
        return False  # from_numpy, frombuffer, from_dlpack, CUDA IPC: written by others
    # (is_shared() is always True of CUDA storages: only CPU ones can be in shared memory)
    return not storage.is_shared() or storage.device.type == "cuda"


def alias_patches():
    """(owner, attribute, replacement) for every way, besides views, of getting a second
    handle on a tensor's memory whose writes the tensor's version counter does not see."""
    from ._patching import wraps

    def exposing_first_argument(original):
        def exposing(tensor, *args, **kwargs):
            expose(tensor)
            return original(tensor, *args, **kwargs)

        return wraps(exposing, original)

    def exposing_source(original):
        def set_(self, source=None, *args, **kwargs):
            forget(self)
            if source is not None:
                expose(source)  # self now shares source's memory with a counter of its own
            return original(self, source, *args, **kwargs) if source is not None else original(self, *args, **kwargs)

        return wraps(set_, original)

    data = vars(torch._C.TensorBase)["data"]

    def get_data(tensor):
        alias = data.__get__(tensor, type(tensor))
        if alias.dtype in INDEX_DTYPES:
            expose(alias)  # `.data` has a version counter of its own
        return alias

    def set_data(tensor, value):
        forget(tensor)  # its shape may change with no version bump
        if isinstance(value, torch.Tensor):
            expose(value)  # the tensor now shares value's memory with a counter of its own
        data.__set__(tensor, value)

    patches = [
        ("torch.Tensor", "data", property(get_data, set_data, None, data.__doc__)),
        ("torch.Tensor", "numpy", exposing_first_argument(torch.Tensor.numpy)),
        ("torch.Tensor", "__dlpack__", exposing_first_argument(torch.Tensor.__dlpack__)),
        ("torch.Tensor", "set_", exposing_source(torch.Tensor.set_)),
        ("torch.utils.dlpack", "to_dlpack", exposing_first_argument(torch.utils.dlpack.to_dlpack)),
    ]
    if hasattr(torch, "to_dlpack"):
        patches.append(("torch", "to_dlpack", exposing_first_argument(torch.to_dlpack)))
    interface = vars(torch.Tensor).get("__cuda_array_interface__")
    if isinstance(interface, property):

        def cuda_array_interface(tensor):
            expose(tensor)
            return interface.fget(tensor)

        patches.append(("torch.Tensor", "__cuda_array_interface__", property(cuda_array_interface, None, None, interface.__doc__)))
    return patches
