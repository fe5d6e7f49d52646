"""F.embedding_bag / nn.EmbeddingBag: ids in [0, num_embeddings) and well-formed offsets.

What: every id is in [0, num_embeddings); offsets start at 0, never decrease and never pass
the number of ids.
Why: CUDA asserts `input[emb] < numRows` and `end >= begin` (EmbeddingBag.cu); a negative id
reads outside the table (illegal memory access).
Example: a category id past the table; offsets built from lengths without a leading 0.
Fix: size the table from the data; offsets = `torch.cumsum(lengths, 0) - lengths`.
"""

from ... import kb
from ...errors import Finding
from .._analysis import locate, plural, positions_text
from .._call import runs_on_cpu
from .._state import checkable
from .._rules import OffsetsRule, RangeRule
from ._common import is_index_tensor
from .embedding import EmbeddingCheck


_MAX = 2  # torch.embedding_bag's `mode` for mode="max"


def _checked_by_cpu_kernel(args, kwargs):
    # In "max" mode the CPU kernel takes decreasing offsets without a word.
    mode = args[4] if len(args) > 4 else kwargs.get("mode", 0)
    return mode != _MAX and runs_on_cpu(args, kwargs)


class EmbeddingBagCheck(EmbeddingCheck):
    pytorch_error = RuntimeError
    checked_by_cpu_kernel = staticmethod(_checked_by_cpu_kernel)

    def rules(self, call):
        rules = super().rules(call)
        ids, offsets = call.get("indices"), call.get("offsets")
        if is_index_tensor(offsets) and offsets.numel() and checkable(ids):
            rules.append(OffsetsRule("offsets", offsets, ids.numel()))
        return rules

    def explain(self, call, rule):
        if isinstance(rule, RangeRule):
            return super().explain(call, rule)
        offsets = rule.tensor
        count, values, positions = locate(offsets, rule.bad())
        facts = {
            "bad_count": count,
            "numel": offsets.numel(),
            "bound": rule.count,
            "positions": positions,
            "bad_values": values,
            "first_offsets": offsets[:8].tolist(),
        }
        found = (
            f"{count} of {offsets.numel()} {plural(offsets.numel(), 'offset')} break the rules (start at 0, "
            f"never decrease, at most {rule.count} = the number of ids): "
            f"{positions_text(values, positions, count)}; offsets begin {facts['first_offsets']}"
        )
        hint = kb.hint("embedding-bag-offsets")
        return Finding(self.cause, found, facts, [("offsets", offsets), ("indices", call.get("indices"))], hint)


PATCHES = [
    (
        "torch",
        "embedding_bag",
        EmbeddingBagCheck("embedding_bag", "weight"),
        ("weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights", "include_last_offset", "padding_idx"),
    ),
]
