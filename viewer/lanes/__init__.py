"""What the swimlanes show, without Qt: the lanes of a session (``data``), cut to the view
and merged below a pixel (``lod``), and the words of a hover (``text``).  ``viewer/ui``
draws them."""
