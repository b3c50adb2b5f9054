"""The hostile-corpus harness (issue 13): ``corpus.py`` builds hostile inputs,
``test_inputs.py`` runs every command on each (``drive.py`` in subprocesses),
``test_window.py`` opens them in the real window (``window_probe.py``),
``test_outputs.py`` and ``test_options.py`` try hostile outputs and numbers.
``CUZK_HOSTILE_SLOW=1`` adds the slowest cases."""
