"""Write-ups: annotations on the view, annotated PNG/SVG images and File > Export. They read
the view; the windows install them."""
