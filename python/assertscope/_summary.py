"""One honest line per tensor, in the spirit of lovely-tensors:
`tensor[32, 10] f32 cuda:0 min=-2.81 max=3.05 nan=0`.

Only called on the error path, so it may read values from the device.
"""

from ._contract import readable_number as number

_SHORT_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
}


def dtype_name(dtype):
    name = str(dtype).replace("torch.", "")
    return _SHORT_DTYPES.get(name, name)


def shape_text(tensor):
    return "tensor[" + ", ".join(str(s) for s in tensor.shape) + "]"


def summarize(tensor):
    """`tensor[N, C] dtype device min=.. max=.. nan=..` for one tensor."""
    import torch

    head = f"{shape_text(tensor)} {dtype_name(tensor.dtype)} {tensor.device}"
    if tensor.is_sparse or tensor.layout != torch.strided:
        return f"{head} ({str(tensor.layout).replace('torch.', '')})"
    if tensor.device.type == "meta":
        return head
    if tensor.numel() == 0:
        return f"{head} empty"
    with torch.no_grad():
        t = tensor.detach()
        if t.dtype == torch.bool:
            return f"{head} true={int(t.sum())} of {t.numel()}"
        if t.is_complex():
            return head
        if t.is_floating_point():
            nan = torch.isnan(t)
            nan_count = int(nan.sum())
            finite_part = t[~nan] if nan_count else t
            inf_count = int(torch.isinf(finite_part).sum())
            if finite_part.numel() == 0:
                text = f"{head} all nan"
            else:
                low, high = torch.aminmax(finite_part.float())
                text = f"{head} min={number(low.item())} max={number(high.item())} nan={nan_count}"
            return text + (f" inf={inf_count}" if inf_count else "")
        low, high = torch.aminmax(t)
        return f"{head} min={low.item()} max={high.item()}"


def describe(tensor):
    """Like summarize, but never fails: a summary is a help, not a reason for a second error."""
    try:
        return summarize(tensor)
    except Exception as exc:  # noqa: BLE001 - any failure here must not hide the real error
        try:
            return f"{shape_text(tensor)} {dtype_name(tensor.dtype)} {tensor.device} ({exc.__class__.__name__})"
        except Exception:  # noqa: BLE001
            return repr(type(tensor))
