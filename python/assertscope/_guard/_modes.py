"""The guard's modes; importable without torch (the API validates a mode before importing it)."""

MODES = ("auto", "sync", "async")
