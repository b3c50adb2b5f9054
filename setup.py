"""Only the optional compiled scanner lives here; everything else is in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and the reader runs
in pure Python (``viewer.io.fastscan.compiled()`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "viewer.io._cscan",
            ["viewer/io/_cscan.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
