"""The load model, fitted from logs: it lives in ``viewer.analysis.load`` (the verdict and
the floors use it too); this name stays for the what-if's callers."""

from viewer.analysis.load import (
    CLASS_WORDS,
    STAGE_CLASS,
    UNSHOWN_SLOPE,
    Alternative,
    LoadFit,
    Profile,
    Sample,
    fit,
    fit_point,
    fixed,
    intervals,
    profile,
    sample,
    synthesis_peak,
)

__all__ = [
    "CLASS_WORDS",
    "STAGE_CLASS",
    "UNSHOWN_SLOPE",
    "Alternative",
    "LoadFit",
    "Profile",
    "Sample",
    "fit",
    "fit_point",
    "fixed",
    "intervals",
    "profile",
    "sample",
    "synthesis_peak",
]
