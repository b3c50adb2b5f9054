"""Annotations on a timeline (notes, ranges, arrows, rulers): the model (``model``), the
undo stack (``undo``) and the sidecar file (``sidecar``).  Pure data, no Qt."""

from __future__ import annotations

from viewer.annotations.model import KINDS, MAX_TEXT, Annotation
from viewer.annotations.sidecar import (
    APP_DIR,
    ENV_USER_DIR,
    MAX_ANNOTATIONS,
    MAX_SIDECAR_BYTES,
    SCHEMA,
    SUFFIX,
    SidecarError,
    UnusableSidecar,
    load,
    read_sidecar,
    save,
    sidecar_candidates,
    sidecar_path,
    user_data_dir,
)
from viewer.annotations.undo import AnnotationSet

__all__ = [
    "APP_DIR",
    "ENV_USER_DIR",
    "KINDS",
    "MAX_ANNOTATIONS",
    "MAX_SIDECAR_BYTES",
    "MAX_TEXT",
    "SCHEMA",
    "SUFFIX",
    "Annotation",
    "AnnotationSet",
    "SidecarError",
    "UnusableSidecar",
    "load",
    "read_sidecar",
    "save",
    "sidecar_candidates",
    "sidecar_path",
    "user_data_dir",
]
