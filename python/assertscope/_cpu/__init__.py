"""The parts of on_cpu() (assertscope.cpu, its entry point): the wrappers that remap a device
argument, the CPU's stand-ins for CUDA's streams, events and device queries, and the remapping
of torch.cuda / torch.accelerator and of the libraries around them."""
