"""The guard's modes; importable without torch (the API validates a mode before importing it).
Defined once, in the contract the binary shares."""

from .._contract import GUARD_MODES as MODES

__all__ = ["MODES"]
