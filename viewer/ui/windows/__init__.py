"""Windows and what lives in them: the main window, compare and sweep windows, loading,
follow mode, search, the wall clock, themes and the empty state. The top room: it assembles
the view, the panels and the write-ups."""
