# The cffi extension narma._narma (see narma_build.py for how narma is found).
from setuptools import setup

setup(cffi_modules=["narma_build.py:ffibuilder"])
