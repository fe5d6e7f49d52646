"""F.embedding / nn.Embedding (and embedding_renorm_ under max_norm): ids in [0, num_embeddings).

Why: the lookup is an index_select of rows; CUDA asserts `srcIndex < srcSelectDimSize`
(Indexing.cu) or `ind >= 0 && ind < ind_dim_size` (IndexKernelUtils.cu). Negative ids are
never valid here: they wrap to huge unsigned values.
Example: tokens added to a tokenizer without resizing the model; position ids past
max_position_embeddings; -100 label padding fed to the embedding.
Fix: size the table from the vocabulary, `resize_token_embeddings`, truncate sequences.
"""

import torch

from ... import kb
from ...errors import Finding
from .._analysis import looks_like_positions, plural, range_report
from .._call import Check
from .._state import checkable
from .._rules import RangeRule
from .._verified import ranges_of
from ._common import is_index_tensor, within


def embedding_hint(ids, facts, rows):
    low, high = facts["min"], facts["max"]
    if low is not None and low < 0:
        negatives = ", ".join(str(v) for v in facts["distinct_bad_values"] if v < 0)
        return kb.hint("negative-embedding-ids", values=negatives)
    if high is None or high < rows:
        return None
    if looks_like_positions(ids):
        if low == 1 and ids.shape[-1] <= rows:
            # 1..T in a table of T rows: the length fits, the numbering does not.
            return kb.hint("positions-from-one", min=low, max=high, bound=rows, last=rows - 1, needed=high + 1)
        return kb.hint("positions-past-embedding", length=ids.shape[-1], bound=rows)
    return kb.hint("tokens-added-without-resize", value=high, bound=rows)


class EmbeddingCheck(Check):
    cause = "embedding-index-out-of-range"
    pytorch_error = IndexError

    def __init__(self, op, weight):
        self.op = op
        self.weight = weight

    def quick(self, call):
        facts = ranges_of(call.get("indices"))
        if facts is None:
            return False
        weight = call.get(self.weight)
        return isinstance(weight, torch.Tensor) and weight.dim() > 0 and within(facts.get(None), 0, weight.shape[0])

    def rules(self, call):
        weight, ids = call.get(self.weight), call.get("indices")
        if not (checkable(weight) and is_index_tensor(ids)) or ids.numel() == 0 or weight.dim() == 0:
            return []
        return [RangeRule("indices", ids, 0, weight.shape[0])]

    def explain(self, call, rule):
        weight, ids = call.get(self.weight), rule.tensor
        rows = weight.shape[0]
        suffix, facts = range_report(ids, 0, rows)
        found = (
            f"{facts['bad_count']} of {facts['numel']} {plural(facts['numel'], 'id')} outside [0, {rows}) "
            f"(num_embeddings = {rows}): {suffix}"
        )
        tensors = [("indices", ids), ("weight", weight)]
        return Finding(self.cause, found, facts, tensors, embedding_hint(ids, facts, rows))


PATCHES = [
    ("torch", "embedding", EmbeddingCheck("embedding", "weight"), ("weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse")),
    ("torch", "embedding_renorm_", EmbeddingCheck("embedding", "input"), ("input", "indices", "max_norm", "norm_type")),
]
