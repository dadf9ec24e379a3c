# The extensions of the narma package: narma._narma (cffi, see narma_build.py for how narma is
# found) and narma._fast (the latency path in CPython's C API, narma/_fast.c), built with the
# same compiler, headers and libraries.
import os
import sys

import numpy
from setuptools import Extension, setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import narma_build  # noqa: E402  (locates narma and sets CC to its MPI compiler wrapper)

fast = Extension(
    "narma._fast",
    ["narma/_fast.c"],
    include_dirs=narma_build._inc + [numpy.get_include()],
    library_dirs=narma_build._libs,
    libraries=["narma"],
    runtime_library_dirs=narma_build._libs,
    extra_compile_args=["-O2"],
)

setup(cffi_modules=["narma_build.py:ffibuilder"], ext_modules=[fast])
