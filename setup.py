"""Only the optional compiled parts live here; everything else is in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and the reader and the
pipeline engine run in pure Python (``viewer.io.scanner.compiled()`` and
``viewer.sim.engine.compiled()`` say which).  The scanner's grammar tables come from
``viewer/io/_grammar.h``, generated from ``viewer/io/grammar.py``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "viewer.io._cscan",
            ["viewer/io/_cscan.c"],
            depends=["viewer/io/_grammar.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "viewer.sim._engine",
            ["viewer/sim/_engine.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ]
)
