"""asv suites for gradstack, one module per layer (run them with ``hatch run asv:run``).

asv runs today's suites against old commits, where upper packages may not exist yet: every
module imports its package through :func:`._common.optional` and its ``setup`` raises
``NotImplementedError`` (which asv records as "skipped") when the package is missing.
"""
