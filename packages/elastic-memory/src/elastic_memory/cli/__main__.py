"""``python -m elastic_memory.cli``."""

from . import main

main()
