"""The one thing pyproject.toml does not declare: the C extension (setuptools' ext-modules table there is
still experimental). The cached read's per-name work is in C (store/cache/_frames.c says why); `pip
install` builds it, with a C compiler and Python's headers."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "store.cache._frames", sources=["store/cache/_frames.c"],
    extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
)])
