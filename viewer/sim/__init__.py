"""Pipeline simulator: realistic synthetic cuzk daemon logs (no Qt, no viewer imports).

``model`` plays the pipeline forward (``budget``: a budget-gated daemon's rules), ``writer``
turns the schedule into log lines, ``reference`` pins a run to the published Phase 8
figures, ``samples`` and ``damage`` write ``sample_logs/``, ``metrics`` recomputes the
figures to check them.
"""
