import sys

# A launch imports some 60 modules of this package: without their bytecode cache Python
# compiles them every time (~0.1 s of a ~1 s start). Write the cache even where
# PYTHONDONTWRITEBYTECODE is set, as container images often do.
sys.dont_write_bytecode = False

from viewer.cli import run  # noqa: E402

run()
