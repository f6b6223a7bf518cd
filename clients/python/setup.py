"""payorch-client's version is the server's, read from the repository's one version place."""
import re
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent.parent.parent
VERSION = re.search(r'^__version__ = "([^"]+)"', (ROOT / "src/payorch/__init__.py").read_text(), re.M)
assert VERSION is not None
setup(version=VERSION.group(1))
