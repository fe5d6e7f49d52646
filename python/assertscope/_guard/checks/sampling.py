"""torch.multinomial and torch.bernoulli: valid probabilities.

What: multinomial rows hold no NaN, inf or negative entry and sum to more than 0;
bernoulli probabilities lie in [0, 1] (NaN fails).
Why: CUDA validates multinomial with `_assert_async` ("probability tensor contains either
`inf`, `nan` or element < 0", "sum of probabilities <= 0", TensorCompare.cu) or asserts in
MultinomialKernel.cu; bernoulli asserts `0 <= p && p <= 1` (DistributionTemplates.h).
Example: `softmax(logits / temperature)` with temperature 0; logits passed to bernoulli.
Fix: argmax for temperature 0, softmax in float32, sigmoid before bernoulli.
"""

import torch

from ... import kb
from ...errors import Finding
from ..._summary import number
from .._analysis import locate, positions_text, plural
from .._call import Check
from .._state import checkable
from .._rules import ProbabilityRowsRule, UnitIntervalRule
from .bce import unit_interval_facts


class MultinomialCheck(Check):
    op = "multinomial"
    cause = "invalid-probabilities"

    def rules(self, call):
        probs = call.get("input")
        if not checkable(probs) or not probs.is_floating_point() or probs.numel() == 0 or probs.dim() == 0:
            return []
        return [ProbabilityRowsRule("input", probs)]

    def explain(self, call, rule):
        p = rule.tensor.detach()
        rows = p if p.dim() == 2 else p.unsqueeze(0)
        nan_rows = torch.isnan(rows).any(-1)
        inf_rows = torch.isinf(rows).any(-1)
        negative_rows = (rows < 0).any(-1)
        zero_rows = ~(rows.sum(-1) > 0) & ~nan_rows & ~inf_rows & ~negative_rows
        bad_rows = nan_rows | inf_rows | negative_rows | zero_rows
        count, _, positions = locate(bad_rows, bad_rows)
        kinds = []
        for label, mask in (("NaN", nan_rows), ("inf", inf_rows), ("a negative entry", negative_rows), ("sum <= 0", zero_rows)):
            k = int(mask.sum())
            if k:
                kinds.append(f"{k} with {label}")
        row_list = ", ".join(str(position[0]) for position in positions)
        found = (
            f"{count} of {rows.shape[0]} {plural(rows.shape[0], 'row')} of probabilities are invalid "
            f"({'; '.join(kinds)}): {plural(count, 'row')} {row_list}{', ...' if count > len(positions) else ''}"
        )
        facts = {
            "bad_count": count,
            "rows": rows.shape[0],
            "nan_rows": int(nan_rows.sum()),
            "inf_rows": int(inf_rows.sum()),
            "negative_rows": int(negative_rows.sum()),
            "zero_sum_rows": int(zero_rows.sum()),
            "positions": positions,
        }
        if facts["nan_rows"] or facts["inf_rows"]:
            hint = kb.hint("probabilities-not-finite")
        elif facts["negative_rows"]:
            hint = kb.hint("probabilities-from-logits", min=number(p.min().item()), max=number(p.max().item()))
        else:
            hint = kb.hint("probabilities-sum-to-zero")
        return Finding(self.cause, found, facts, [("input", rule.tensor)], hint)


class BernoulliCheck(Check):
    op = "bernoulli"
    cause = "invalid-probabilities"

    def __init__(self, probability):
        # "input" for torch.bernoulli(p) and x.bernoulli(), "p" for x.bernoulli_(p).
        self.probability = probability

    def rules(self, call):
        if self.probability == "input" and call.has("p"):
            return []  # bernoulli(x, p=0.3): a float p, checked by PyTorch on the host
        p = call.get(self.probability)
        if not checkable(p) or not p.is_floating_point() or p.numel() == 0:
            return []
        return [UnitIntervalRule(self.probability, p)]

    def explain(self, call, rule):
        count, nan_count, suffix, facts = unit_interval_facts(rule.tensor)
        found = f"{count} of {facts['numel']} {plural(facts['numel'], 'probability')} outside [0, 1]: {suffix}"
        if nan_count:
            found += f" ({nan_count} NaN)"
        if nan_count == count:
            hint = kb.hint("probabilities-not-finite")
        else:
            hint = kb.hint("probabilities-from-logits", min=number(facts["min"]), max=number(facts["max"]))
        return Finding(self.cause, found, facts, [("p", rule.tensor)], hint)


_MULTINOMIAL = MultinomialCheck()
_BERNOULLI = BernoulliCheck("input")
_BERNOULLI_P = BernoulliCheck("p")

_MULTINOMIAL_NAMES = ("input", "num_samples", "replacement")
PATCHES = [
    ("torch", "multinomial", _MULTINOMIAL, _MULTINOMIAL_NAMES),
    ("torch.Tensor", "multinomial", _MULTINOMIAL, _MULTINOMIAL_NAMES),
    ("torch", "bernoulli", _BERNOULLI, ("input", "p")),
    ("torch.Tensor", "bernoulli", _BERNOULLI, ("input", "p")),
    ("torch.Tensor", "bernoulli_", _BERNOULLI_P, ("input", "p")),
]
