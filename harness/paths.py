"""Where the harness's own files live: the checkout it runs from and its cache.

The checkout holds cases/ and the cache (unless HARNESS_CACHE points elsewhere);
a child process (another python, a source-build environment) imports the harness
from REPO_ROOT.
"""
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir() -> str:
    """The harness's cache: environments, generated models, memos, bisect states."""
    return os.environ.get("HARNESS_CACHE", os.path.join(REPO_ROOT, ".harness-cache"))
