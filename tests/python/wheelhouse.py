"""A local wheelhouse for the tests that install assertscope as users do (the pre-commit
hook, the wheel itself): the wheel of ASSERTSCOPE_WHEELHOUSE when set (what `scripts/wheel`
built), else a wheel of this checkout built by maturin in the dev profile (reusing
target/debug), plus the setuptools wheel that the hook package builds with, taken from
virtualenv's own copy so that nothing is downloaded."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def wheel(out: Path) -> Path:
    given = os.environ.get("ASSERTSCOPE_WHEELHOUSE")
    if given:
        found = sorted(Path(given).glob("assertscope-*.whl"))
        if not found:
            pytest.fail(f"ASSERTSCOPE_WHEELHOUSE={given} holds no assertscope wheel")
        return Path(shutil.copy(found[-1], out))
    try:
        import maturin  # noqa: F401
    except ImportError:
        pytest.skip("maturin is not installed (tests/requirements.txt)")
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--profile", "dev", "--out", str(out)],
        cwd=REPO, check=True, capture_output=True, timeout=1800,
    )
    return next(out.glob("assertscope-*.whl"))


def setuptools_wheel(out: Path) -> Path:
    import virtualenv

    embedded = sorted((Path(virtualenv.__file__).parent / "seed" / "wheels" / "embed").glob("setuptools-*.whl"))
    if embedded:
        return Path(shutil.copy(embedded[-1], out))
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(out), "setuptools>=61"], check=True)
    return next(out.glob("setuptools-*.whl"))


def offline_pip_env(wheelhouse: Path) -> dict:
    """pip takes packages from the wheelhouse only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return env
