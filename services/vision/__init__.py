"""Vision: camera frames in, observations of the board out (what is seen, never what it means).

Pure cores (arrays in, values out) and thin adapters:
- `grid`: the board plane (grid spacings, a9 = (0, 0), a0 = (0, 9)), point names, line-support scores;
- `board`: `find_board(image) -> BoardFit` (ArUco DICT_4X4_50 ids 0..3 one spacing diagonally outside a9, i9, i0,
  a0 when present, else the printed grid alone), `NoBoardFound(reason)`;
- `occupancy`: `read_points(image, fit, classifier=None) -> PointReading` (empty / red / black per point, piece
  centres, types from `pieces` where asked), the canonical top view;
- `tracker`: `Tracker.step(state, image, t_us, frame_sha256) -> (state, observations)`: calibration, faults, hand,
  lift, place, nudge, misaligned pieces (5.10), BoardStable once still (5.7) with the piece letters carried (the
  public entry; by job: `still_board` the state machine, `hand`, `frames`, `point_evidence`, `move_checks`,
  `interpret`, `settings` its named thresholds, `squares`);
- `evidence`: content-addressed JPEG stores (memory, directory, PostgreSQL); `retention`: which frames stay full
  size and which are thinned (the venue's `[evidence]` policy, a pure core); `sweep`: that policy applied to a
  store by the ledger; `progress`, `quiet`: how far each board's frames are read and which cameras went quiet;
  `service`: `VisionCore` (FrameCaptured events in, catalogue events out) and the Kafka loop of `xqarb vision
  serve`; `cli`: `xqarb vision detect|serve|sweep|render`;
- `render`, `pieces`: the synthetic camera video and the piece-type classifier (their own modules).
"""
