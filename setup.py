"""The one compiled module: finegrain._native (src/finegrain/_native.c), optional.

Everything else is in pyproject.toml. ``optional=True``: without a C compiler the install still
succeeds, and finegrain takes its pure-Python path where the module would have been used.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("finegrain._native", ["src/finegrain/_native.c"], optional=True)])
