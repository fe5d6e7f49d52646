"""What `assertscope run` injects into every Python process it starts (see sitecustomize.py)."""
