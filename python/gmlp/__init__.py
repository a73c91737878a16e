"""gmlp: gMLP and MLP-Mixer image models and gMLP language models on any OpenCL device.

A thin layer over libgmlp (gmlp.h) through ctypes, with NumPy arrays in and out::

    import gmlp
    from PIL import Image

    print(gmlp.devices())                      # [] when there is no OpenCL platform
    with gmlp.load("model.safetensors") as m:  # a file, or a model folder
        x = m.preprocess(Image.open("cat.png"))
        print(m.topk(m.classify(x), k=3))      # [(index, label, probability), ...]

    with gmlp.load("lm.safetensors") as lm:
        print(lm.generate("Hello", max_tokens=50, seed=1))

Failures raise gmlp.Error (a RuntimeError; argument errors are also ValueErrors) with
``e.status``, a gmlp.Status, and the library's message as ``str(e)``.
"""
from . import _lib
from ._lib import Error, Status
from ._model import Model, Precision, devices, load

__version__: str = _lib.lib.gmlp_version().decode()
"""The version of libgmlp, which is the package's."""

__all__ = ["Error", "Model", "Precision", "Status", "__version__", "devices", "load"]
