"""`xqarb vision ...`: detect (one photo), serve (the Kafka service), render (sample video for people and the demo).

Cheap to import: OpenCV, numpy and Kafka are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    vision = subparsers.add_parser("vision",
                                   help="vision tools: `vision detect IMAGE`, `vision serve`, `vision render`")
    sub = vision.add_subparsers(dest="vision_command", metavar="VISION_COMMAND")

    p = sub.add_parser("detect", help="find the board in one photo and read its 90 points")
    p.add_argument("image", help="a photo of a board (JPEG, PNG ...)")
    p.add_argument("--json", action="store_true", help='print {"squares": ..., "corners": [[x, y] x 4]}')
    p.add_argument("--no-markers", action="store_true", help="ignore ArUco markers (the printed grid alone)")
    p.add_argument("--corners", nargs=4, metavar="X,Y", default=None,
                   help="the grid's four corner points in image pixels, a9 i9 i0 a0 going round in either "
                        "direction from any of them (the board is then not looked for)")
    p.set_defaults(handler=_detect)

    p = sub.add_parser("serve", help="consume xq.frames, track each board, produce xq.observations")
    p.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers HOST:PORT[,HOST:PORT]")
    p.add_argument("--group", default="xq-vision", help="consumer group (vision processes share partitions)")
    p.add_argument("--evidence-dir", default=None,
                   help="directory for evidence frames, SHA-256 named (default: $XQARB_DATA_DIR/evidence, ./var/...)")
    p.add_argument("--source", default=None, help="source id of this process's events (default vision-<host>-<pid>)")
    p.add_argument("--stable-ms", type=int, default=750, help="stillness after the hand left before BoardStable (5.7)")
    p.add_argument("--max-records", type=int, default=64, help="frames per poll")
    p.add_argument("--partitions", type=int, default=None,
                   help="partitions per topic where this process makes missing topics (default 12, as `xqarb up`)")
    p.add_argument("--state-url", default=None,
                   help="the referee API (http://HOST:PORT) whose /api/boards completes the games in progress a "
                        "starting process learns from the topics (an embedded broker restarted empty)")
    p.add_argument("--config", default=None,
                   help="venue configuration (JSON/TOML, as ingest's): boards with `corners` start from them")
    p.set_defaults(handler=_serve)

    p = sub.add_parser("sweep", help="apply the venue's evidence retention policy ([evidence]) to its frames")
    p.add_argument("--config", default=None, help="venue configuration (JSON/TOML) with its [evidence] table")
    p.add_argument("--db", default=None, help="the ledger: a file or postgresql:// URL (default as `xqarb verify`)")
    p.add_argument("--evidence-dir", default=None,
                   help="the frames where the venue names no evidence.store (default: $XQARB_DATA_DIR/evidence)")
    p.add_argument("--every", type=float, default=None, help="sweep every S seconds until interrupted (default once)")
    p.add_argument("--json", action="store_true", help="print each sweep's report as a JSON line")
    p.set_defaults(handler=_sweep)

    p = sub.add_parser("render", help="write a rendered game video (JPEG frames + truth.jsonl) for people and demos")
    try:
        from .render_cli import add_arguments
    except ImportError as exc:  # the renderer's own dependencies missing: say so when used, not at import
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        p.set_defaults(handler=lambda args, exc=exc: _fail(f"vision render is unavailable: {exc}"))
    else:
        add_arguments(p)
        p.set_defaults(handler=_render)
    vision.set_defaults(handler=lambda args: _fail("say which: vision detect | serve | render (see --help)"))


def _fail(message: str) -> int:
    print(f"xqarb vision: {message}", file=sys.stderr)
    return 2


def _render(args: argparse.Namespace) -> int:
    from .render_cli import main_render

    return int(main_render(args) or 0)


def _detect(args: argparse.Namespace) -> int:
    import cv2

    from .board import NoBoardFound, find_board
    from .detect import read_board
    from .given import BadCorners, fit_given_corners, parse_corners

    try:
        given = parse_corners(args.corners) if args.corners is not None else None
    except BadCorners as exc:
        return _fail(f"--corners: {exc.reason}")
    image = cv2.imread(args.image, cv2.IMREAD_COLOR)
    if image is None:
        return _fail(f"{args.image}: cannot read an image from this file")
    try:
        fit = (find_board(image, markers=not args.no_markers) if given is None
               else fit_given_corners(image, given))
    except NoBoardFound as exc:
        return _fail(f"{args.image}: no board found: {exc.reason}")
    except BadCorners as exc:
        return _fail(f"{args.image}: --corners: {exc.reason}")
    classifier = _classifier()
    # discs found on the photo, pieces read from crops centred on their top faces, the board's rules applied;
    # '?' where any of it is unsure (vision.detect)
    reading = read_board(image, fit, classifier)
    fit, squares = reading.fit, reading.squares  # the fit half-turned when the pieces showed Red at the other end
    corners = [[round(float(x), 1), round(float(y), 1)] for x, y in fit.corners]
    if args.json:
        print(json.dumps({"squares": squares, "corners": corners}))
    else:
        for r in range(10):
            print(squares[r * 9:(r + 1) * 9])
        names = ("a9", "i9", "i0", "a0")
        print("corners: " + "  ".join(f"{n}=({x:.1f}, {y:.1f})" for n, (x, y) in zip(names, corners, strict=True)))
        if not fit.oriented:
            print("orientation: not told by the pieces (Red assumed at the bottom of the grid as found)")
    return 0


def _classifier():
    """The piece-type classifier where it is installed and loads; None otherwise (types then stay X / x)."""
    try:
        from .pieces import PieceClassifier
    except ImportError:
        return None
    try:
        return PieceClassifier.load()
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"xqarb vision: piece classifier not loaded ({exc}); types are not read", file=sys.stderr)
        return None


def _sweep(args: argparse.Namespace) -> int:
    from .sweep import sweep_command

    return sweep_command(args)


def _serve(args: argparse.Namespace) -> int:
    from .service import serve

    return serve(args)
