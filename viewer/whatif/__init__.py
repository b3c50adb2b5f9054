"""What would help: replay a session with other workers, GPUs or stage durations (no Qt).

``knobs`` says what changes, ``replay`` turns a session into the simulator's inputs
and plays them with ``viewer.sim.engine`` (the simulator's own engine), ``predict``
gives the measured, replayed and predicted figures side by side.
"""

from viewer.whatif.knobs import KnobError, Knobs
from viewer.whatif.predict import FORMAT, Outcome, WhatIf, sentence, span_text, what_if
from viewer.whatif.replay import Plan, plan

__all__ = [
    "FORMAT",
    "KnobError",
    "Knobs",
    "Outcome",
    "Plan",
    "WhatIf",
    "plan",
    "sentence",
    "span_text",
    "what_if",
]
