"""setup.py of snowflake-ids: builds the extension snowflake_ids._native from the
checkout this directory is part of, with the checkout's own rule (make
sdk-python: sdk/bindings.mk; the C library's archive linked in statically), for
the Python that runs this file. Offline, with Debian's toolchain:

    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/pip install ./sdk/python

SNOWFLAKE_SOURCE=/path/to/checkout when this directory was copied out of it.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class MakeBuildExt(build_ext):
    """Builds the extension with make in the checkout, then copies it where
    setuptools expects it."""

    def build_extension(self, ext):
        root = os.environ.get("SNOWFLAKE_SOURCE") or os.path.dirname(os.path.dirname(HERE))
        if not os.path.exists(os.path.join(root, "sdk", "bindings.mk")):
            raise SystemExit("snowflake-ids: no checkout of snowflake at %s; set SNOWFLAKE_SOURCE" % root)
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        subprocess.check_call(["make", "-C", root, "--no-print-directory", "sdk-python",
                               "SDK_PYTHON=" + sys.executable], env=env)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(root, "sdk", "python", "snowflake_ids", "_native" + suffix)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.abspath(built) != os.path.abspath(target):
            shutil.copyfile(built, target)


setup(
    name="snowflake-ids",
    version="1.3.0",
    description="Snowflake ids (64-bit, time-ordered) from a worker id leased from etcd or ZooKeeper, "
                "the same as the snowflake PostgreSQL extension's: a binding of libsnowflake_ids",
    license="PostgreSQL",
    packages=["snowflake_ids"],
    ext_modules=[Extension("snowflake_ids._native", sources=[])],
    cmdclass={"build_ext": MakeBuildExt},
    python_requires=">=3.9",
    zip_safe=False,
)
