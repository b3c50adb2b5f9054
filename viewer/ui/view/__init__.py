"""The timeline: ``TimelineView`` and what it draws (lanes, axis, grid, legend, overlays,
counters, flows, search matches, the hover label). It knows no panel, window or export."""
