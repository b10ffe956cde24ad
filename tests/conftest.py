"""Test-wide settings: hypothesis runs are derandomised so CI is reproducible.

Set ``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples locally.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
