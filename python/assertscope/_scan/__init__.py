"""The parts of `python -m assertscope.scan` (the module `assertscope.scan` is its entry point
and command line): loading the target, recording the sampler's indices, gathering the facts
of each field and of each batch, and the progress line."""
