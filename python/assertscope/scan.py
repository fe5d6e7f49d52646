"""Iterate a Dataset or DataLoader and gather the facts of every batch before it reaches the GPU.

This is the in-process half of ``assertscope scan``: the CLI runs

    python -m assertscope.scan TARGET --out FACTS.json --plan PLAN [options]

where TARGET is ``path/to/file.py:name`` or ``package.module:name`` naming a Dataset,
a DataLoader, or a zero-argument function returning one, and PLAN (JSON, from the
binary) gives per role (``labels``, ``tokens``, ``inputs``) the bounds to sort values
by, as ``check`` does for a file. This module decides nothing about the data: it
splits each batch into fields (labels, inputs, token ids) and gathers what ``check``'s
readers gather from a column (counts, the class histogram, min/max, shapes, dtypes,
and the first positions of unusual values), with the dataset index of each sample,
also with ``num_workers > 0``: the sampler is wrapped so that the indices of every
batch are recorded as they are handed to the workers, and batches come back in that
order. The binary runs its checks on these facts and renders the findings.

The facts go to the JSON file named by ``--out`` (version ``_contract.SCAN_RESULT_VERSION``),
never to stdout, which belongs to the user's code. Progress goes to stderr. Needs
Python 3.9+ and torch; nothing else.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import traceback

from assertscope import _contract
from assertscope._scan.batches import Gatherer
from assertscope._scan.loading import ScanError, import_torch, load_target, locate, model_has_batchnorm, one_line, resolve
from assertscope._scan.progress import Progress
from assertscope._scan.recording import dataset_indices, recording_loader


def scan(args) -> dict:
    locate(args.target)
    import_torch()
    from torch.utils.data import DataLoader

    result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "error": None}
    obj = resolve(load_target(args.target), args.target)
    if isinstance(obj, DataLoader):
        loader = obj
        result["kind"] = "DataLoader"
    else:
        loader = DataLoader(obj, batch_size=args.batch_size, num_workers=args.num_workers, shuffle=False)
        result["kind"] = type(obj).__name__
    has_bn = model_has_batchnorm(args.model)
    queue = collections.deque()
    batch_size = loader.batch_size
    unbatched = loader.batch_size is None and loader.batch_sampler is None
    loader, recorded = recording_loader(loader, queue)
    result.update(
        {
            "batch_size": batch_size,
            "num_workers": loader.num_workers,
            "indices": "dataset" if recorded else "iteration",
        }
    )
    try:
        total = len(loader)
    except TypeError:
        total = None
    if args.max_batches is not None and total is not None:
        total = min(total, args.max_batches)
    gatherer = Gatherer(args, args.plan, unbatched)
    progress = Progress(total, not args.no_progress)
    done = 0
    iterator = iter(loader)
    while args.max_batches is None or done < args.max_batches:
        try:
            batch = next(iterator)
        except StopIteration:
            break
        except ScanError:
            raise
        except Exception as e:  # the user's dataset or collate_fn failed
            indices = list(queue[0]) if recorded and queue else None
            where = f"batch {done}" + (f" (dataset indices {short_list(indices)})" if indices else "")
            result["error"] = {
                "kind": "iterate",
                "message": f"{args.target}: loading {where} raised {type(e).__name__}: {one_line(e)}",
                "batch": done,
                "traceback": traceback.format_exc(),
            }
            break
        indices = dataset_indices(queue.popleft()) if recorded else None
        gatherer.add(done, batch, indices)
        done += 1
        progress.update(done, gatherer.samples)
    progress.close(done, gatherer.samples)
    result.update(gatherer.to_json(has_bn))
    return result


def short_list(values, shown=8):
    text = ", ".join(str(v) for v in values[:shown])
    return text + (f", … ({len(values)} in all)" if len(values) > shown else "")


def parse_args(argv=None):
    # The flags are those the binary passes (src/contract.rs `scan_flag`), each read by its name.
    flag = _contract.SCAN_FLAGS
    ap = argparse.ArgumentParser(prog="python -m assertscope.scan", description=__doc__.splitlines()[0])
    ap.add_argument("target", help="path/to/file.py:name or package.module:name")
    ap.add_argument(flag["out"], dest="out", required=True, help="where to write the facts (JSON)")
    ap.add_argument(flag["plan"], dest="plan", type=json.loads, default={}, help="per role (labels, tokens, inputs), the bounds (JSON)")
    ap.add_argument(flag["label_key"], dest="label_key", help="dict key or tuple position of the labels")
    ap.add_argument(flag["input_key"], dest="input_key", help="dict key or tuple position of the inputs")
    ap.add_argument(flag["batch_size"], dest="batch_size", type=int, default=64, help="for a Dataset target")
    ap.add_argument(flag["num_workers"], dest="num_workers", type=int, default=0, help="for a Dataset target")
    ap.add_argument(flag["max_batches"], dest="max_batches", type=int)
    ap.add_argument(flag["model"], dest="model", help="module:name of the model (or a function returning it), to know if it uses BatchNorm")
    ap.add_argument(flag["no_progress"], dest="no_progress", action="store_true")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        result = scan(args)
    except ScanError as e:
        result = {"version": _contract.SCAN_RESULT_VERSION, "target": args.target, "error": {"kind": "load", "message": str(e)}}
    except ImportError as e:
        # A module the target imports is missing: its name says it all.
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "error": {"kind": "load", "message": f"{args.target}: import failed: {one_line(e)}"},
        }
    except Exception as e:
        result = {
            "version": _contract.SCAN_RESULT_VERSION,
            "target": args.target,
            "error": {
                "kind": "load",
                "message": f"{args.target}: loading it raised {type(e).__name__}: {one_line(e)}",
                "traceback": traceback.format_exc(),
            },
        }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
