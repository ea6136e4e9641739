"""Vision: camera frames in, observations of the board out (what is seen, never what it means)."""
