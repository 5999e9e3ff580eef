"""kiln: LLM inference in C++, with OpenVINO GenAI's Python API.

Code written for ``openvino_genai`` runs on kiln with the import changed::

    import kiln as ov_genai

    pipe = ov_genai.LLMPipeline("path/to/model", "CPU")
    print(pipe.generate("The Sun is", max_new_tokens=32))
"""

from . import _kiln
from ._kiln import *  # noqa: F401,F403  (the whole API; __init__.pyi types it)
from ._kiln import __version__

__all__ = sorted(name for name in vars(_kiln) if not name.startswith("_")) + ["__version__", "get_version"]


def get_version() -> str:
    """kiln's version, as openvino_genai.get_version() gives its own."""
    return __version__
