"""``python -m agentlog``: the ``agentlog`` command."""

from agentlog import _main

_main()
